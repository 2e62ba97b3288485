import { createHash } from 'node:crypto';
import { test as base, expect, type Page } from '@playwright/test';
import { ADMIN_PASSWORD, ADMIN_USERNAME, SERVER_URL_ENV } from './constants';

/** Reusable pieces for console specs: `import { test, expect, signIn } from '../support/fixtures'`. */

export { ADMIN_PASSWORD, ADMIN_USERNAME };

/** Base URL of the server under test, e.g. http://127.0.0.1:41234. */
export function baseUrl(): string {
  const url = process.env[SERVER_URL_ENV];
  if (!url)
    throw new Error(`${SERVER_URL_ENV} is not set: run the specs through playwright.config.ts (its global setup starts the server)`);
  return url;
}

export interface SessionUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
}

export interface Session {
  token: string;
  refresh_token: string;
  user: SessionUser;
}

/**
 * Signs in through POST /api/auth/login and stores the session where the console keeps it (localStorage
 * `token`, `refresh_token`, `user` as JSON) before the page's first script runs. Stored once per tab, so
 * a spec that signs out and reloads stays signed out.
 */
export async function signIn(page: Page, username = ADMIN_USERNAME, password = ADMIN_PASSWORD): Promise<Session> {
  const res = await page.request.post('/api/auth/login', { data: { username, password } });
  const body = await res.json();
  expect(res.status(), `sign-in of ${username}: ${body.message ?? ''}`).toBe(200);
  const session: Session = { token: body.data.access_token, refresh_token: body.data.refresh_token, user: body.data.user };
  await page.addInitScript((s: Session) => {
    if (sessionStorage.getItem('e2e-session-stored')) return;
    sessionStorage.setItem('e2e-session-stored', '1');
    localStorage.setItem('token', s.token);
    localStorage.setItem('refresh_token', s.refresh_token);
    localStorage.setItem('user', JSON.stringify(s.user));
  }, session);
  return session;
}

/**
 * A private address of its own for each test, sent as X-Forwarded-For: the server trusts its loopback
 * peer as a reverse proxy (TRUST_PROXY's default), so each test is a different client behind it, as a
 * team's browsers are. Otherwise every sign-in of the whole suite would come from one address and meet
 * the per-address login limit (30 a minute), which is not what these tests are about.
 */
function clientAddressOf(testId: string): string {
  const hash = createHash('sha256').update(testId).digest();
  return `10.${hash[0]}.${hash[1]}.${1 + ((hash[2] ?? 0) % 254)}`;
}

export const test = base.extend<{ signedIn: Session }>({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern.
  baseURL: async ({}, use) => use(baseUrl()),
  // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern.
  extraHTTPHeaders: async ({}, use, testInfo) => use({ 'X-Forwarded-For': clientAddressOf(testInfo.testId) }),
  /** The page of a test that takes `signedIn` starts signed in as root. */
  signedIn: async ({ page }, use) => use(await signIn(page)),
});

export { expect };
