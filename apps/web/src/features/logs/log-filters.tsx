import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { FilterField, FilterForm, invalidProps, useFilterDraft } from '../../components/filter-form';
import { Input } from '../../components/ui/input';
import { Select } from '../../components/ui/select';
import { type LogFilters, logLevels, logPhases, noFilters, SERVICE_NAME_MAX, serviceIdError, writeLogSearch } from './log-query';

interface LogFiltersFormProps {
  /** The filters in effect; the form starts from them and follows when they change elsewhere (back button). */
  applied: LogFilters;
  onSearch(filters: LogFilters): void;
}

const same = (a: LogFilters, b: LogFilters) => writeLogSearch(a, 1).toString() === writeLogSearch(b, 1).toString();
const check = (draft: LogFilters) => serviceIdError(draft.serviceId);

/**
 * Service id, service name, phase and level with Search and Clear (docs/console.md §2.15). Nothing applies until
 * Search (or Enter); Clear empties the form and shows the whole log again.
 */
export function LogFiltersForm({ applied, onSearch }: LogFiltersFormProps) {
  const { t } = useTranslation('logs');
  const id = useId();
  const { draft, error, set, submit, clear } = useFilterDraft({ applied, empty: noFilters, same, check, onSearch });

  return (
    <FilterForm ns="logs" columns="lg:grid-cols-4" onSubmit={submit} onClear={clear}>
      <FilterField id={`${id}-service-id`} label={t('filters.serviceId')} error={error && t(`filters.${error}`)}>
        <Input
          id={`${id}-service-id`}
          inputMode="numeric"
          autoComplete="off"
          placeholder={t('filters.serviceIdPlaceholder')}
          value={draft.serviceId}
          {...invalidProps(`${id}-service-id`, error)}
          onChange={(e) => set('serviceId', e.target.value)}
        />
      </FilterField>
      <FilterField id={`${id}-service-name`} label={t('filters.serviceName')}>
        <Input
          id={`${id}-service-name`}
          autoComplete="off"
          maxLength={SERVICE_NAME_MAX}
          placeholder={t('filters.serviceNamePlaceholder')}
          value={draft.serviceName}
          onChange={(e) => set('serviceName', e.target.value)}
        />
      </FilterField>
      <FilterField id={`${id}-phase`} label={t('filters.phase')}>
        <Select id={`${id}-phase`} value={draft.phase} onChange={(e) => set('phase', e.target.value as LogFilters['phase'])}>
          <option value="all">{t('phase.all')}</option>
          {logPhases.map((phase) => (
            <option key={phase} value={phase}>
              {t(`phase.${phase}`)}
            </option>
          ))}
        </Select>
      </FilterField>
      <FilterField id={`${id}-level`} label={t('filters.level')}>
        <Select id={`${id}-level`} value={draft.level} onChange={(e) => set('level', e.target.value as LogFilters['level'])}>
          <option value="all">{t('level.all')}</option>
          {logLevels.map((level) => (
            <option key={level} value={level}>
              {t(`level.${level}`)}
            </option>
          ))}
        </Select>
      </FilterField>
    </FilterForm>
  );
}
