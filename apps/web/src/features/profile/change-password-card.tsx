import { useMutation, useQueryClient } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { signInPath } from '../../app/return-to';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { PasswordInput } from '../../components/ui/password-input';
import { Spinner } from '../../components/ui/spinner';
import { call } from '../../lib/api';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { clearSession } from '../../lib/session';
import {
  canSubmitPasswordChange,
  MIN_PASSWORD_LENGTH,
  type PasswordChangeFields,
  type PasswordChangeProblem,
  passwordChangeErrorKey,
  passwordChangeProblem,
} from './password-change-rules';

const empty: PasswordChangeFields = { current: '', next: '', confirm: '' };

/**
 * Change password (docs/console.md §2.12, §5); password users only. The server ends every session of the user
 * on success, so the console signs out and asks for the new password.
 */
export function ChangePasswordCard() {
  const { t } = useTranslation('profile');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const id = useId();
  const [fields, setFields] = useState<PasswordChangeFields>(empty);
  const [problem, setProblem] = useState<PasswordChangeProblem | null>(null);

  const change = useMutation({
    mutationFn: (f: PasswordChangeFields) =>
      call(routes.users.changePassword, { body: { current_password: f.current, new_password: f.next }, notify: false }),
    onSuccess: () => {
      notify.success(t('password.changed'), t('password.signInAgain'));
      clearSession();
      queryClient.clear();
      navigate(signInPath, { replace: true });
    },
    onError: (err) => {
      const key = passwordChangeErrorKey(err);
      notify.error(t('password.failed'), key ? t(key) : failureText(err, t));
    },
  });

  const set = (key: keyof PasswordChangeFields) => (value: string) => {
    setFields((f) => ({ ...f, [key]: value }));
    setProblem(null);
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!canSubmitPasswordChange(fields) || change.isPending) return;
    const found = passwordChangeProblem(fields);
    setProblem(found);
    if (!found) change.mutate(fields);
  };

  const errorId = `${id}-error`;
  const input = (key: keyof PasswordChangeFields, autoComplete: string) => (
    <div className="space-y-2">
      <Label htmlFor={`${id}-${key}`}>{t(`password.${key}`)}</Label>
      <PasswordInput
        id={`${id}-${key}`}
        autoComplete={autoComplete}
        value={fields[key]}
        onChange={(e) => set(key)(e.target.value)}
        aria-invalid={key !== 'current' && problem ? true : undefined}
        aria-describedby={key !== 'current' && problem ? errorId : undefined}
      />
    </div>
  );

  return (
    <Card>
      <form onSubmit={onSubmit} aria-busy={change.isPending}>
        <CardHeader>
          <CardTitle>{t('password.title')}</CardTitle>
          <CardDescription>{t('password.description', { count: MIN_PASSWORD_LENGTH })}</CardDescription>
        </CardHeader>
        <CardContent className="space-y-4">
          {input('current', 'current-password')}
          {input('next', 'new-password')}
          {input('confirm', 'new-password')}
          {problem && (
            <p id={errorId} role="alert" className="text-sm text-red-600 dark:text-red-400">
              {t(`password.${problem}`, { count: MIN_PASSWORD_LENGTH })}
            </p>
          )}
        </CardContent>
        <CardFooter className="justify-end">
          <Button type="submit" disabled={!canSubmitPasswordChange(fields) || change.isPending}>
            {change.isPending && <Spinner />}
            {t('password.submit')}
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}
