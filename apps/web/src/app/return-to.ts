export const signInPath = '/login';

/** Router state of the sign-in page: where the user was sent away from. */
export interface SignInState {
  from?: string;
  /** The session ended under the user (token refused, renewal failed): the sign-in page says so. */
  expired?: boolean;
}

const ENDED_KEY = 'session-ended';

/** Remembers, for this tab, that the session ended under the user (read once by the sign-in page). */
export function markSessionEnded(): void {
  try {
    sessionStorage.setItem(ENDED_KEY, '1');
  } catch {
    // Storage refused (private mode quotas): the notice is a courtesy, signing in works without it.
  }
}

/** Whether the sign-in page should say the session ended. */
export function sessionEnded(state: unknown): boolean {
  let marked = false;
  try {
    marked = sessionStorage.getItem(ENDED_KEY) === '1';
  } catch {
    marked = false;
  }
  return marked || (state as SignInState | null)?.expired === true;
}

/** Clears the mark once the sign-in page has said it, so the next visit does not say it again. */
export function clearSessionEnded(): void {
  try {
    sessionStorage.removeItem(ENDED_KEY);
  } catch {
    // Nothing stored, nothing to clear.
  }
}

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

const PROVIDER_RETURN_KEY = 'toolport.returnAfterProvider';

/**
 * Sign-in with GitHub or Google leaves the console and comes back to its own return page: the page the
 * user was sent away from (an MCP client's consent page, say) is kept in sessionStorage meanwhile.
 */
export function rememberProviderReturn(state: unknown): void {
  const target = returnPath(state);
  try {
    if (target === '/') sessionStorage.removeItem(PROVIDER_RETURN_KEY);
    else sessionStorage.setItem(PROVIDER_RETURN_KEY, target);
  } catch {
    // Storage may be unavailable (private modes): the user then lands on the dashboard.
  }
}

/** Where to go after a provider sign-in: the remembered page (checked again), once, else `/`. */
export function takeProviderReturn(): string {
  try {
    const from = sessionStorage.getItem(PROVIDER_RETURN_KEY);
    sessionStorage.removeItem(PROVIDER_RETURN_KEY);
    return returnPath({ from });
  } catch {
    return '/';
  }
}
