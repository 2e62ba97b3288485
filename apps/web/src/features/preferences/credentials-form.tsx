import type { OAuthProvider } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { PasswordInput } from '../../components/ui/password-input';
import { Spinner } from '../../components/ui/spinner';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { CLIENT_ID_MAX, CLIENT_SECRET_MAX, type Preferences, planCredentials, providerKeys } from './preference-rules';
import { useSaveOptions } from './use-preferences';

/**
 * A provider's client ID and secret (docs/console.md §2.13). The stored secret is never shown or sent back: the
 * field starts empty with the server's mask as its placeholder, and a blank field keeps what is stored.
 */
export function CredentialsForm({ provider, prefs }: { provider: OAuthProvider; prefs: Preferences }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const keys = providerKeys[provider];
  const label = keys.label;
  const savedSecret = prefs[keys.clientSecret] ?? '';
  const [clientId, setClientId] = useState(prefs[keys.clientId] ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [problem, setProblem] = useState<ParseKeys<'preferences'> | null>(null);
  const save = useSaveOptions();
  const plan = planCredentials(prefs, provider, { clientId, clientSecret });
  const unchanged = !plan.ok && plan.problem === 'credentials.errors.nothingChanged';

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!plan.ok) return setProblem(plan.problem);
    save.mutate(plan.updates, {
      onSuccess: () => {
        setClientId((v) => v.trim());
        setClientSecret('');
        notify.success(t('credentials.saved', { provider: label }));
      },
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };

  return (
    <form onSubmit={onSubmit} aria-busy={save.isPending} aria-label={t('credentials.title', { provider: label })} className="space-y-4">
      <div className="space-y-1.5">
        <Label htmlFor={`${id}-id`}>{t('credentials.clientId')}</Label>
        <Input
          id={`${id}-id`}
          autoComplete="off"
          spellCheck={false}
          maxLength={CLIENT_ID_MAX}
          value={clientId}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${id}-problem` : undefined}
          onChange={(e) => {
            setClientId(e.target.value);
            setProblem(null);
          }}
        />
        {problem && (
          <p id={`${id}-problem`} role="alert" className="text-xs font-medium text-red-600 dark:text-red-400">
            {t(problem, { provider: label })}
          </p>
        )}
      </div>
      <div className="space-y-1.5">
        <Label htmlFor={`${id}-secret`}>{t('credentials.clientSecret')}</Label>
        <PasswordInput
          id={`${id}-secret`}
          autoComplete="new-password"
          spellCheck={false}
          maxLength={CLIENT_SECRET_MAX}
          placeholder={savedSecret || t('credentials.secretNotSet')}
          value={clientSecret}
          aria-describedby={`${id}-secret-hint`}
          onChange={(e) => {
            setClientSecret(e.target.value);
            setProblem(null);
          }}
        />
        <p id={`${id}-secret-hint`} className="text-xs text-slate-600 dark:text-slate-400">
          {savedSecret ? t('credentials.secretKept') : t('credentials.secretMissing')}
        </p>
      </div>
      <div className="flex justify-end">
        <Button type="submit" disabled={unchanged || save.isPending}>
          {save.isPending && <Spinner />}
          {t('credentials.save')}
        </Button>
      </div>
    </form>
  );
}
