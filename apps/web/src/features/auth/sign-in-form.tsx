import { type FormEvent, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { PasswordInput } from '../../components/ui/password-input';
import { Spinner } from '../../components/ui/spinner';
import { ProviderButtons } from './provider-buttons';
import { type SignInField, useSignIn } from './use-sign-in';

function OrDivider() {
  const { t } = useTranslation('auth');
  return (
    <div className="flex items-center gap-3 text-xs uppercase text-slate-500 dark:text-slate-400">
      <span aria-hidden="true" className="h-px flex-1 bg-slate-200 dark:bg-slate-800" />
      {t('or')}
      <span aria-hidden="true" className="h-px flex-1 bg-slate-200 dark:bg-slate-800" />
    </div>
  );
}

/** The sign-in form of docs/console.md §2.3, shared by the /login page and the top bar's dialog. */
export function SignInForm({ onSignedIn }: { onSignedIn(): void }) {
  const { t } = useTranslation('auth');
  const fields = { username: useRef<HTMLInputElement>(null), password: useRef<HTMLInputElement>(null) };
  // The field a refusal points at: marked invalid until it is edited, and focused with its text selected.
  const [invalid, setInvalid] = useState<SignInField | null>(null);
  const { phase, submit } = useSignIn(onSignedIn, (field) => {
    setInvalid(field);
    fields[field].current?.focus();
    fields[field].current?.select();
  });
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const id = useId();
  const submitting = phase === 'submitting';

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    void submit(username, password);
  };

  return (
    <div className="space-y-5">
      <ProviderButtons />
      <OrDivider />
      <form noValidate onSubmit={onSubmit} className="space-y-4" aria-busy={submitting}>
        <div className="space-y-2">
          <Label htmlFor={`${id}-username`}>{t('username')}</Label>
          <Input
            id={`${id}-username`}
            name="username"
            autoComplete="username"
            autoFocus
            ref={fields.username}
            aria-invalid={invalid === 'username' || undefined}
            value={username}
            onChange={(e) => {
              setUsername(e.target.value);
              setInvalid(null);
            }}
          />
        </div>
        <div className="space-y-2">
          <Label htmlFor={`${id}-password`}>{t('password')}</Label>
          <PasswordInput
            id={`${id}-password`}
            name="password"
            autoComplete="current-password"
            ref={fields.password}
            aria-invalid={invalid === 'password' || undefined}
            value={password}
            onChange={(e) => {
              setPassword(e.target.value);
              setInvalid(null);
            }}
          />
        </div>
        <Button type="submit" className="w-full" disabled={submitting}>
          {submitting && <Spinner />}
          {submitting ? t('signingIn') : t('continue')}
        </Button>
      </form>
    </div>
  );
}
