import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type EmbeddingsStatus, type OptionKey, routes } from '@toolport/contract';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { PasswordInput } from '../../components/ui/password-input';
import { Spinner } from '../../components/ui/spinner';
import { call } from '../../lib/api';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import type { Preferences } from './preference-rules';
import { type OptionUpdate, useSaveOptions } from './use-preferences';

const statusKey = ['options', 'embeddings'] as const;
const tones = { off: 'neutral', unknown: 'info', ok: 'success', failing: 'danger' } as const;
/** The plain fields, in their order on the card; the key has its own field. */
const FIELDS = [
  ['EmbeddingsURL', 'url'],
  ['EmbeddingsModel', 'model'],
  ['EmbeddingsDimensions', 'dimensions'],
  ['EmbeddingsTimeoutMs', 'timeout'],
] as const satisfies readonly (readonly [OptionKey, string])[];

/** The provider's last status on this replica, with its reason, and a Check now that asks it for one vector. */
function ProviderStatus({ status, onCheck, checking }: { status?: EmbeddingsStatus; onCheck(): void; checking: boolean }) {
  const { t, i18n } = useTranslation('preferences');
  if (!status) return null;
  return (
    <div className="space-y-1.5 rounded-md border border-slate-200 p-3 text-sm dark:border-slate-700" data-testid="embeddings-status">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <Badge tone={tones[status.state]}>{t(`embeddings.state.${status.state}`)}</Badge>
        <Button type="button" variant="outline" size="sm" disabled={status.state === 'off' || checking} onClick={onCheck}>
          {checking && <Spinner />}
          {t('embeddings.check')}
        </Button>
      </div>
      {status.state === 'failing' && status.reason && (
        <p role="alert" className="text-red-700 dark:text-red-400">
          {t(`embeddings.reason.${status.reason}`)}
          {status.detail && <span className="block break-all text-xs text-slate-600 dark:text-slate-400">{status.detail}</span>}
        </p>
      )}
      {status.state !== 'off' && (
        <p className="text-xs text-slate-600 dark:text-slate-400">
          {t('embeddings.vectors', { count: status.vectors })}
          {status.checked_at !== null &&
            ` · ${t('embeddings.checkedAt', { when: new Date(status.checked_at).toLocaleString(i18n.language) })}`}
        </p>
      )}
    </div>
  );
}

/**
 * Discovery search's optional embeddings provider (decision 0046): an OpenAI-compatible endpoint, its model,
 * key (never shown again; a blank field keeps it), vector size and time bound, saved together; and the
 * provider's last status. Without a URL and model, discovery search ranks lexically.
 */
export function EmbeddingsCard({ prefs }: { prefs: Preferences }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const queryClient = useQueryClient();
  const [values, setValues] = useState(() => Object.fromEntries(FIELDS.map(([key]) => [key, prefs[key] ?? ''])) as Record<string, string>);
  const [apiKey, setApiKey] = useState('');
  const save = useSaveOptions();
  const status = useQuery({ queryKey: statusKey, queryFn: ({ signal }) => call(routes.options.embeddings, { signal, notify: false }) });
  const check = useMutation({
    mutationFn: () => call(routes.options.checkEmbeddings, { notify: false }),
    onSuccess: (data) => queryClient.setQueryData(statusKey, data),
    onError: (error) => notify.error(t('embeddings.checkFailed'), failureText(error, t)),
  });
  const updates: OptionUpdate[] = FIELDS.filter(([key]) => values[key]?.trim() !== (prefs[key] ?? '')).map(([key]) => ({
    key,
    value: values[key]?.trim() ?? '',
  }));
  if (apiKey.trim()) updates.push({ key: 'EmbeddingsAPIKey', value: apiKey.trim() });

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(updates, {
      onSuccess: () => {
        setApiKey('');
        notify.success(t('embeddings.saved'));
        void queryClient.invalidateQueries({ queryKey: statusKey });
      },
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <CardHeader>
        <CardTitle id={`${id}-title`}>{t('embeddings.title')}</CardTitle>
        <CardDescription>{t('embeddings.description')}</CardDescription>
      </CardHeader>
      <CardContent className="space-y-4">
        <ProviderStatus status={status.data} onCheck={() => check.mutate()} checking={check.isPending} />
        <form onSubmit={onSubmit} aria-busy={save.isPending} aria-label={t('embeddings.title')} className="space-y-3">
          {FIELDS.map(([key, field]) => (
            <div key={key} className="space-y-1.5">
              <Label htmlFor={`${id}-${field}`}>{t(`embeddings.${field}`)}</Label>
              <Input
                id={`${id}-${field}`}
                autoComplete="off"
                spellCheck={false}
                inputMode={field === 'dimensions' || field === 'timeout' ? 'numeric' : undefined}
                placeholder={t(`embeddings.${field}Placeholder`)}
                value={values[key] ?? ''}
                onChange={(e) => setValues((v) => ({ ...v, [key]: e.target.value }))}
              />
            </div>
          ))}
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-key`}>{t('embeddings.apiKey')}</Label>
            <PasswordInput
              id={`${id}-key`}
              autoComplete="new-password"
              spellCheck={false}
              placeholder={prefs.EmbeddingsAPIKey || t('credentials.secretNotSet')}
              value={apiKey}
              aria-describedby={`${id}-key-hint`}
              onChange={(e) => setApiKey(e.target.value)}
            />
            <p id={`${id}-key-hint`} className="text-xs text-slate-600 dark:text-slate-400">
              {prefs.EmbeddingsAPIKey ? t('credentials.secretKept') : t('embeddings.apiKeyHint')}
            </p>
          </div>
          <div className="flex justify-end">
            <Button type="submit" disabled={updates.length === 0 || save.isPending}>
              {save.isPending && <Spinner />}
              {t('embeddings.save')}
            </Button>
          </div>
        </form>
      </CardContent>
    </Card>
  );
}
