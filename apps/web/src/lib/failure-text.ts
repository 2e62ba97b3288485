import type { FlatNamespace, TFunction } from 'i18next';
import { ApiError } from './api';

/**
 * Why a call failed, for a screen's own message: the server's localised message when it sent one, else a
 * translated network or unknown-error text (a browser's own error text would not be in the user's language).
 * `t` may be any screen's: both texts are in the common namespace.
 */
export function failureText(err: unknown, t: TFunction<FlatNamespace>): string {
  if (err instanceof ApiError && err.serverMessage) return err.serverMessage;
  if (err instanceof ApiError && err.kind === 'network') return t('errors.network.description', { ns: 'common' });
  return t('errors.other.description', { ns: 'common' });
}
