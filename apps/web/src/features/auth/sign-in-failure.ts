import type { TFunction } from 'i18next';
import { ApiError } from '../../lib/api';

/**
 * The toast for a sign-in that did not succeed (docs/console.md §8): a refusal by the server (4xx: wrong
 * password, disabled account, too many attempts) is '登录失败' with its message; a request that failed
 * (server error, no answer) is '登录错误'.
 */
export function signInFailure(err: unknown, t: TFunction<'auth'>): { title: string; description: string } {
  const refused = err instanceof ApiError && err.status >= 400 && err.status < 500;
  if (refused) return { title: t('failed.title'), description: err.serverMessage || t('failed.default') };
  const serverMessage = err instanceof ApiError ? err.serverMessage : undefined;
  return { title: t('error.title'), description: serverMessage || t('error.default') };
}
