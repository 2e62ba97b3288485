import type { PublicUser } from '@toolport/contract';
import { useSyncExternalStore } from 'react';
import { isAdminRole } from './roles';

/** Browser storage keys of the session (docs/console.md §3). */
export const TOKEN_KEY = 'token';
export const REFRESH_TOKEN_KEY = 'refresh_token';
export const USER_KEY = 'user';

/** The signed-in user as stored under `user`: the sign-in answer's `data.user`. */
export type SessionUser = Pick<PublicUser, 'id' | 'username' | 'display_name' | 'role'> & Partial<PublicUser>;

export interface Session {
  token: string | null;
  user: SessionUser | null;
}

/** What the sign-in, refresh and OAuth answers carry. */
export interface SessionGrant {
  access_token: string;
  refresh_token?: string;
  user: SessionUser;
}

const listeners = new Set<() => void>();

function emit(): void {
  for (const listener of listeners) listener();
}

function parseUser(raw: string | null): SessionUser | null {
  if (!raw) return null;
  try {
    const user = JSON.parse(raw) as SessionUser | null;
    return user && typeof user === 'object' && typeof user.username === 'string' ? user : null;
  } catch {
    return null;
  }
}

export const getToken = (): string | null => localStorage.getItem(TOKEN_KEY);
export const getRefreshToken = (): string | null => localStorage.getItem(REFRESH_TOKEN_KEY);

export function saveSession(grant: SessionGrant): void {
  localStorage.setItem(TOKEN_KEY, grant.access_token);
  if (grant.refresh_token) localStorage.setItem(REFRESH_TOKEN_KEY, grant.refresh_token);
  localStorage.setItem(USER_KEY, JSON.stringify(grant.user));
  emit();
}

/** Replaces the stored user (after a profile edit or a fresh GET /user/self), keeping the tokens. */
export function saveUser(user: SessionUser): void {
  localStorage.setItem(USER_KEY, JSON.stringify(user));
  emit();
}

export function clearSession(): void {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(REFRESH_TOKEN_KEY);
  localStorage.removeItem(USER_KEY);
  emit();
}

// useSyncExternalStore needs the same object while nothing changed: cache it by the raw stored strings.
let cached: { token: string | null; rawUser: string | null; session: Session } | null = null;

export function readSession(): Session {
  const token = getToken();
  const rawUser = localStorage.getItem(USER_KEY);
  if (cached && cached.token === token && cached.rawUser === rawUser) return cached.session;
  cached = { token, rawUser, session: { token, user: token ? parseUser(rawUser) : null } };
  return cached.session;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // Another tab signing in or out changes this tab's session too.
  window.addEventListener('storage', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', listener);
  };
}

/** The current session; components re-render when it changes (also from another tab). */
export function useSession(): Session {
  return useSyncExternalStore(subscribe, readSession);
}

export const isAdmin = (user: SessionUser | null): boolean => !!user && isAdminRole(user.role);

/** The name the console shows for a user: the display name, else the username. */
export const displayNameOf = (user: Pick<SessionUser, 'display_name' | 'username'>): string => user.display_name || user.username;
