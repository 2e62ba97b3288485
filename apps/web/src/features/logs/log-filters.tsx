import { Eraser, Search } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { Select } from '../../components/ui/select';
import { type LogFilters, logLevels, logPhases, noFilters, SERVICE_NAME_MAX, serviceIdError, writeLogSearch } from './log-query';

interface LogFiltersFormProps {
  /** The filters in effect; the form starts from them and follows when they change elsewhere (back button). */
  applied: LogFilters;
  onSearch(filters: LogFilters): void;
}

/**
 * Service id, service name, phase and level with Search and Clear (docs/console.md §2.15). Nothing applies until
 * Search (or Enter); Clear empties the form and shows the whole log again.
 */
export function LogFiltersForm({ applied, onSearch }: LogFiltersFormProps) {
  const { t } = useTranslation('logs');
  const id = useId();
  const [draft, setDraft] = useState<LogFilters>(applied);
  const [idError, setIdError] = useState<ReturnType<typeof serviceIdError>>();
  const appliedSearch = writeLogSearch(applied, 1).toString();
  const [followed, setFollowed] = useState(appliedSearch);
  if (followed !== appliedSearch) {
    // Adjusted while rendering, not in an effect: the form never shows the old filters for a frame.
    setFollowed(appliedSearch);
    if (writeLogSearch(draft, 1).toString() !== appliedSearch) {
      setDraft(applied);
      setIdError(undefined);
    }
  }
  const set = <K extends keyof LogFilters>(key: K, value: LogFilters[K]) => setDraft((d) => ({ ...d, [key]: value }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const error = serviceIdError(draft.serviceId);
    setIdError(error);
    if (!error) onSearch(draft);
  };
  const clear = () => {
    setDraft(noFilters);
    setIdError(undefined);
    onSearch(noFilters);
  };

  return (
    <search aria-label={t('filters.label')}>
      <form onSubmit={submit} noValidate className="space-y-4">
        <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-service-id`}>{t('filters.serviceId')}</Label>
            <Input
              id={`${id}-service-id`}
              inputMode="numeric"
              autoComplete="off"
              placeholder={t('filters.serviceIdPlaceholder')}
              value={draft.serviceId}
              aria-invalid={idError ? true : undefined}
              aria-describedby={idError ? `${id}-service-id-error` : undefined}
              onChange={(e) => {
                set('serviceId', e.target.value);
                setIdError(undefined);
              }}
            />
            {idError && (
              <p id={`${id}-service-id-error`} role="alert" className="text-xs font-medium text-red-600 dark:text-red-400">
                {t(`filters.${idError}`)}
              </p>
            )}
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-service-name`}>{t('filters.serviceName')}</Label>
            <Input
              id={`${id}-service-name`}
              autoComplete="off"
              maxLength={SERVICE_NAME_MAX}
              placeholder={t('filters.serviceNamePlaceholder')}
              value={draft.serviceName}
              onChange={(e) => set('serviceName', e.target.value)}
            />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-phase`}>{t('filters.phase')}</Label>
            <Select id={`${id}-phase`} value={draft.phase} onChange={(e) => set('phase', e.target.value as LogFilters['phase'])}>
              <option value="all">{t('phase.all')}</option>
              {logPhases.map((phase) => (
                <option key={phase} value={phase}>
                  {t(`phase.${phase}`)}
                </option>
              ))}
            </Select>
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-level`}>{t('filters.level')}</Label>
            <Select id={`${id}-level`} value={draft.level} onChange={(e) => set('level', e.target.value as LogFilters['level'])}>
              <option value="all">{t('level.all')}</option>
              {logLevels.map((level) => (
                <option key={level} value={level}>
                  {t(`level.${level}`)}
                </option>
              ))}
            </Select>
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
