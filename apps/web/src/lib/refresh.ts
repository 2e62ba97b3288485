import { type ApiEnvelope, pathOf, type RefreshRequest, routes } from '@toolport/contract';
import { getRefreshToken, getToken, type SessionGrant, saveSession } from './session';

let inFlight: Promise<string | null> | null = null;

async function exchange(refreshToken: string): Promise<string | null> {
  try {
    const request: RefreshRequest = { refresh_token: refreshToken };
    // Not through `api`: a refused refresh must not start another refresh or the sign-out of a 401.
    const res = await fetch(`/api${pathOf(routes.auth.refresh)}`, {
      method: routes.auth.refresh.method,
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify(request),
    });
    const body = (await res.json().catch(() => null)) as Partial<ApiEnvelope<SessionGrant>> | null;
    if (!res.ok || !body?.success || !body.data?.access_token) return null;
    saveSession(body.data);
    return body.data.access_token;
  } catch {
    return null;
  }
}

async function refreshOnce(expiredToken: string): Promise<string | null> {
  // Another call (or tab) may have renewed the session while this request was on its way.
  const current = getToken();
  if (current && current !== expiredToken) return current;
  const refreshToken = getRefreshToken();
  if (!current || !refreshToken) return null;
  return exchange(refreshToken);
}

/**
 * A fresh access token after `expiredToken` was refused, or null when the session cannot be renewed.
 * Refresh tokens are single-use and a reused one revokes them all, so concurrent calls share one refresh,
 * and tabs take turns through a Web Lock where the browser has them.
 */
export function refreshSession(expiredToken: string): Promise<string | null> {
  if (inFlight) return inFlight;
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  const run: Promise<string | null> = locks
    ? // The lock resolves with the callback's own result; the DOM typings nest the promise.
      (locks.request('toolport-session-refresh', () => refreshOnce(expiredToken)) as unknown as Promise<string | null>)
    : refreshOnce(expiredToken);
  const shared = run.finally(() => {
    inFlight = null;
  });
  inFlight = shared;
  return shared;
}
