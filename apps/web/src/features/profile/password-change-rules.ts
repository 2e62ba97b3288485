import { MIN_PASSWORD_LENGTH } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { ApiError } from '../../lib/api';

export interface PasswordChangeFields {
  current: string;
  next: string;
  confirm: string;
}

/** The server's minimum, checked here to answer before a round trip. */
export { MIN_PASSWORD_LENGTH };

/** The button stays disabled until all three fields are filled (docs/console.md §5). */
export const canSubmitPasswordChange = ({ current, next, confirm }: PasswordChangeFields): boolean =>
  current !== '' && next !== '' && confirm !== '';

export type PasswordChangeProblem = 'passwordMismatch' | 'passwordTooShort';

/** What stops a filled-in form from being sent: the two new passwords differ, or the new one is too short. */
export function passwordChangeProblem({ next, confirm }: PasswordChangeFields): PasswordChangeProblem | null {
  if (next !== confirm) return 'passwordMismatch';
  if (next.length < MIN_PASSWORD_LENGTH) return 'passwordTooShort';
  return null;
}

/** Server codes with their own message (docs/console.md §8); anything else shows the server's message. */
const codeMessages: Record<string, ParseKeys<'profile'>> = {
  current_password_incorrect: 'password.errors.currentPasswordIncorrect',
  oauth_user_cannot_change_password: 'password.errors.oauthCannotChange',
};

/** The translation key for a refused change, or null when the server's own message should show. */
export function passwordChangeErrorKey(err: unknown): ParseKeys<'profile'> | null {
  return err instanceof ApiError && err.code ? (codeMessages[err.code] ?? null) : null;
}
