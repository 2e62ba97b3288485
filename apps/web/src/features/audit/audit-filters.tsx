import { auditObjectTypes } from '@toolport/contract';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { FilterField, FilterForm, invalidProps, useFilterDraft } from '../../components/filter-form';
import { Input } from '../../components/ui/input';
import { Select } from '../../components/ui/select';
import { type AuditFilters, FILTER_MAX, noAuditFilters, rangeError, writeAuditSearch } from './audit-query';

interface AuditFiltersFormProps {
  /** The filters in effect; the form starts from them and follows when they change elsewhere (back button). */
  applied: AuditFilters;
  onSearch(filters: AuditFilters): void;
}

const same = (a: AuditFilters, b: AuditFilters) => writeAuditSearch(a, 1).toString() === writeAuditSearch(b, 1).toString();

/** Actor, object type and id, and a time range, with Search and Clear, as on the Logs screen. */
export function AuditFiltersForm({ applied, onSearch }: AuditFiltersFormProps) {
  const { t } = useTranslation('audit');
  const id = useId();
  const { draft, error, set, submit, clear } = useFilterDraft({ applied, empty: noAuditFilters, same, check: rangeError, onSearch });

  return (
    <FilterForm ns="audit" columns="lg:grid-cols-5" onSubmit={submit} onClear={clear}>
      <FilterField id={`${id}-actor`} label={t('filters.actor')}>
        <Input
          id={`${id}-actor`}
          autoComplete="off"
          maxLength={FILTER_MAX}
          placeholder={t('filters.actorPlaceholder')}
          value={draft.actor}
          onChange={(e) => set('actor', e.target.value)}
        />
      </FilterField>
      <FilterField id={`${id}-type`} label={t('filters.objectType')}>
        <Select
          id={`${id}-type`}
          value={draft.objectType}
          onChange={(e) => set('objectType', e.target.value as AuditFilters['objectType'])}
        >
          <option value="all">{t('object.all')}</option>
          {auditObjectTypes.map((type) => (
            <option key={type} value={type}>
              {t(`object.${type}`)}
            </option>
          ))}
        </Select>
      </FilterField>
      <FilterField id={`${id}-object`} label={t('filters.objectId')}>
        <Input
          id={`${id}-object`}
          autoComplete="off"
          maxLength={FILTER_MAX}
          placeholder={t('filters.objectIdPlaceholder')}
          value={draft.objectId}
          onChange={(e) => set('objectId', e.target.value)}
        />
      </FilterField>
      <FilterField id={`${id}-since`} label={t('filters.since')}>
        <Input id={`${id}-since`} type="datetime-local" value={draft.since} onChange={(e) => set('since', e.target.value)} />
      </FilterField>
      <FilterField id={`${id}-until`} label={t('filters.until')} error={error && t(`filters.${error}`)}>
        <Input
          id={`${id}-until`}
          type="datetime-local"
          value={draft.until}
          {...invalidProps(`${id}-until`, error)}
          onChange={(e) => set('until', e.target.value)}
        />
      </FilterField>
    </FilterForm>
  );
}
