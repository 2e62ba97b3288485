import type { OAuthProvider } from '@toolport/contract';

/** Session-storage key of the bind the profile sent the browser off to finish at a provider. */
export const BIND_INTENT_KEY = 'oauth_bind';

/** As long as the server keeps a pending sign-in (STATE_TTL_SECONDS in the OAuth module). */
const BIND_INTENT_TTL_MS = 10 * 60 * 1000;

interface BindIntent {
  provider: OAuthProvider;
  /** The `state` of the provider's authorize address: the return carries it back, so it names this bind only. */
  state: string;
  savedAt: number;
}

/**
 * Remembers, just before the browser leaves for the provider, that this round trip binds `provider` to the
 * signed-in account. The return screen reads it before the server answers, so a refusal at the provider
 * (`?error=`) or a failed exchange leads back to the profile rather than to the sign-in page.
 */
export function rememberBindIntent(provider: OAuthProvider, authorizeUrl: string): void {
  let state: string | null = null;
  try {
    state = new URL(authorizeUrl, window.location.origin).searchParams.get('state');
  } catch {
    state = null;
  }
  if (!state) return;
  const intent: BindIntent = { provider, state, savedAt: Date.now() };
  sessionStorage.setItem(BIND_INTENT_KEY, JSON.stringify(intent));
}

/**
 * Whether the return of `provider` with this `state` finishes a bind started from the profile (reads only:
 * the return screen forgets the bind with `forgetBindIntent` once it has used it). Without a state (some
 * provider errors), a recent bind of the same provider counts.
 */
export function isBindReturn(provider: OAuthProvider, state: string | null): boolean {
  try {
    const intent = JSON.parse(sessionStorage.getItem(BIND_INTENT_KEY) ?? 'null') as Partial<BindIntent> | null;
    if (!intent || intent.provider !== provider || typeof intent.savedAt !== 'number') return false;
    if (Date.now() - intent.savedAt > BIND_INTENT_TTL_MS) return false;
    return state ? intent.state === state : true;
  } catch {
    return false;
  }
}

export function forgetBindIntent(): void {
  sessionStorage.removeItem(BIND_INTENT_KEY);
}
