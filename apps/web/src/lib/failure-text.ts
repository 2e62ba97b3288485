import type { TFunction } from 'i18next';
import { ApiError } from './api';

/**
 * Why a call failed, for a screen's own message: the server's localised message when it sent one, else a
 * translated network or unknown-error text (a browser's own error text would not be in the user's language).
 */
export function failureText(err: unknown, t: TFunction): string {
  if (err instanceof ApiError && err.serverMessage) return err.serverMessage;
  if (err instanceof ApiError && err.kind === 'network') return t('common:errors.network.description');
  return t('common:errors.other.description');
}
