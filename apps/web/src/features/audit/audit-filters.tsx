import { auditObjectTypes } from '@toolport/contract';
import { Eraser, Search } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { Select } from '../../components/ui/select';
import { type AuditFilters, FILTER_MAX, noAuditFilters, rangeError, writeAuditSearch } from './audit-query';

interface AuditFiltersFormProps {
  /** The filters in effect; the form starts from them and follows when they change elsewhere (back button). */
  applied: AuditFilters;
  onSearch(filters: AuditFilters): void;
}

/** Actor, object type and id, and a time range, with Search and Clear, as on the Logs screen. */
export function AuditFiltersForm({ applied, onSearch }: AuditFiltersFormProps) {
  const { t } = useTranslation('audit');
  const id = useId();
  const [draft, setDraft] = useState<AuditFilters>(applied);
  const [error, setError] = useState<ReturnType<typeof rangeError>>();
  const appliedSearch = writeAuditSearch(applied, 1).toString();
  const [followed, setFollowed] = useState(appliedSearch);
  if (followed !== appliedSearch) {
    // Adjusted while rendering, not in an effect: the form never shows the old filters for a frame.
    setFollowed(appliedSearch);
    if (writeAuditSearch(draft, 1).toString() !== appliedSearch) {
      setDraft(applied);
      setError(undefined);
    }
  }
  const set = <K extends keyof AuditFilters>(key: K, value: AuditFilters[K]) => {
    setDraft((d) => ({ ...d, [key]: value }));
    setError(undefined);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problem = rangeError(draft);
    setError(problem);
    if (!problem) onSearch(draft);
  };
  const clear = () => {
    setDraft(noAuditFilters);
    setError(undefined);
    onSearch(noAuditFilters);
  };

  return (
    <search aria-label={t('filters.label')}>
      <form onSubmit={submit} noValidate className="space-y-4">
        <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-5">
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-actor`}>{t('filters.actor')}</Label>
            <Input
              id={`${id}-actor`}
              autoComplete="off"
              maxLength={FILTER_MAX}
              placeholder={t('filters.actorPlaceholder')}
              value={draft.actor}
              onChange={(e) => set('actor', e.target.value)}
            />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-type`}>{t('filters.objectType')}</Label>
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
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-object`}>{t('filters.objectId')}</Label>
            <Input
              id={`${id}-object`}
              autoComplete="off"
              maxLength={FILTER_MAX}
              placeholder={t('filters.objectIdPlaceholder')}
              value={draft.objectId}
              onChange={(e) => set('objectId', e.target.value)}
            />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-since`}>{t('filters.since')}</Label>
            <Input id={`${id}-since`} type="datetime-local" value={draft.since} onChange={(e) => set('since', e.target.value)} />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-until`}>{t('filters.until')}</Label>
            <Input
              id={`${id}-until`}
              type="datetime-local"
              value={draft.until}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? `${id}-until-error` : undefined}
              onChange={(e) => set('until', e.target.value)}
            />
            {error && (
              <p id={`${id}-until-error`} role="alert" className="text-xs font-medium text-red-600 dark:text-red-400">
                {t(`filters.${error}`)}
              </p>
            )}
          </div>
        </div>
        <div className="flex flex-wrap justify-end gap-2">
          <Button variant="outline" onClick={clear}>
            <Eraser aria-hidden="true" />
            {t('filters.clear')}
          </Button>
          <Button type="submit">
            <Search aria-hidden="true" />
            {t('filters.search')}
          </Button>
        </div>
      </form>
    </search>
  );
}
