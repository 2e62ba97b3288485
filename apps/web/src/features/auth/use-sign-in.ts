import { routes } from '@toolport/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { call } from '../../lib/api';
import { notify } from '../../lib/notify';
import { saveSession } from '../../lib/session';
import { signInFailure } from './sign-in-failure';

export type SignInPhase = 'idle' | 'submitting';
/** The field the focus goes to after a refusal: the empty one, else the password. */
export type SignInField = 'username' | 'password';

/**
 * Sign-in with username and password (docs/console.md §4, §5): both must be non-empty; while the request runs
 * the form is `submitting` and further submits are ignored; on success the session is stored and
 * `onSignedIn` runs. When it does not succeed, `onFailed` names the field to focus (the submit button is disabled
 * while the request runs, so the focus would otherwise fall to the page's body, docs/console.md §4).
 */
export function useSignIn(onSignedIn: () => void, onFailed: (field: SignInField) => void = () => {}) {
  const { t } = useTranslation('auth');
  const [phase, setPhase] = useState<SignInPhase>('idle');

  async function submit(username: string, password: string): Promise<void> {
    if (phase === 'submitting') return;
    if (!username.trim() || !password) {
      notify.error(t('validation.title'), t('validation.empty'));
      onFailed(username.trim() ? 'password' : 'username');
      return;
    }
    setPhase('submitting');
    try {
      const grant = await call(routes.auth.login, {
        body: { username: username.trim(), password },
        auth: false,
        notify: false,
      });
      saveSession(grant);
      notify.success(t('success.title'), t('success.description'));
      onSignedIn();
    } catch (err) {
      const failure = signInFailure(err, t);
      notify.error(failure.title, failure.description);
      onFailed('password');
    } finally {
      setPhase('idle');
    }
  }

  return { phase, submit };
}
