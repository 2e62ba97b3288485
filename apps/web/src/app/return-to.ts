export const signInPath = '/login';

/** Router state of the sign-in page: where the user was sent away from. */
export interface SignInState {
  from?: string;
  /** The session ended under the user (token refused, renewal failed): the sign-in page says so. */
  expired?: boolean;
}

export const sessionEnded = (state: unknown): boolean => (state as SignInState | null)?.expired === true;

/**
 * Where to go after signing in: the remembered origin when it is a path of this console, else `/`.
 * Only same-origin paths count, so a crafted link cannot send a user to another site.
 */
export function returnPath(state: unknown): string {
  const from = (state as SignInState | null)?.from;
  if (typeof from !== 'string' || !from.startsWith('/') || from.startsWith('//') || from.startsWith('/\\')) return '/';
  if (from === signInPath || from.startsWith(`${signInPath}?`)) return '/';
  return from;
}
