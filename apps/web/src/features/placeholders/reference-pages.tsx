import { useTranslation } from 'react-i18next';
import { PlaceholderPage } from './placeholder-page';

export function ApiPage() {
  const { t } = useTranslation();
  return <PlaceholderPage title={t('placeholder.api')} />;
}

export function ModelsPage() {
  const { t } = useTranslation();
  return <PlaceholderPage title={t('placeholder.models')} />;
}
