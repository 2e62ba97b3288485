import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { PlaceholderPage } from './placeholder-page';

export function ApiPage() {
  const { t } = useTranslation();
  return <PlaceholderPage title={t('placeholder.api')} />;
}

export function ModelsPage() {
  const { t } = useTranslation();
  return <PlaceholderPage title={t('placeholder.models')} />;
}

/** The top bar's Docs link lands here; until the docs exist, it points on to the server's API reference. */
export function DocsPage() {
  const { t } = useTranslation();
  return (
    <PlaceholderPage title={t('placeholder.docs')}>
      <Button asChild variant="outline">
        <a href="/api/docs">{t('placeholder.apiReference')}</a>
      </Button>
    </PlaceholderPage>
  );
}
