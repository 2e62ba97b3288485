import { ISOLATED_SESSIONS_PER_USER, type Isolation } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { FormField } from '../../components/form-field';
import { Select } from '../../components/ui/select';

/**
 * Isolation of a stdio service (create and edit dialogs): one process for every client session, or one
 * per session, with the per-user cap on such processes shown beside the choice.
 */
export function IsolationField({ value, onChange }: { value: Isolation; onChange(value: Isolation): void }) {
  const { t } = useTranslation('services');
  return (
    <FormField label={t('form.isolation')} hint={t('form.isolationHint', { count: ISOLATED_SESSIONS_PER_USER })}>
      <Select value={value} onChange={(e) => onChange(e.target.value === 'session' ? 'session' : 'shared')}>
        <option value="shared">{t('form.isolations.shared')}</option>
        <option value="session">{t('form.isolations.session')}</option>
      </Select>
    </FormField>
  );
}
