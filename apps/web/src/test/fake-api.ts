import type { SelfUser, StatusData } from '@toolport/contract';
import { vi } from 'vitest';

/** What a fake route answers: an envelope with a status, or no answer at all (the network failed). */
export type FakeReply = { status: number; body: unknown } | 'network-error';

export interface FakeRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

type Handler = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

export const ok = (data?: unknown, message?: string): FakeReply => ({ status: 200, body: { success: true, data, message } });
/** A refusal as the server sends it; `field` is the request's field it blames (decision 0058). */
export const fail = (status: number, message?: string, code?: string, field?: string): FakeReply => ({
  status,
  body: { success: false, message, code, ...(field ? { field } : {}) },
});

export const statusData = (overrides: Partial<StatusData> = {}): StatusData => ({
  system_name: 'Toolport',
  version: '1.2.3',
  start_time: Math.floor(Date.now() / 1000) - 3600,
  server_address: 'http://localhost:3000',
  github_oauth: false,
  github_client_id: '',
  google_oauth: false,
  google_client_id: '',
  oidc_providers: [],
  registration_enabled: false,
  ...overrides,
});

export const selfUser = (overrides: Partial<SelfUser> = {}): SelfUser => ({
  id: 7,
  username: 'alice',
  display_name: 'Alice Liddell',
  email: 'alice@example.com',
  role: 1,
  status: 1,
  github_id: '',
  google_id: '',
  wechat_id: '',
  login_method: 'password',
  created_at: 0,
  token: 'tp_0123456789abcdefghijklmnopqrstuv',
  ...overrides,
});

/**
 * Opt-in shaking: with `FAKE_API_JITTER_MS=N`, each answer comes after a random 0..N ms, so the console's requests
 * end in a different order on every run. A test that passes only when one answer comes before another (the order
 * a busy CI machine does not keep) fails under it. Off by default; tests with fake timers are left as they are.
 */
const jitterMs = Number((globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.FAKE_API_JITTER_MS ?? 0);
const realSetTimeout = globalThis.setTimeout;
/** Each fakeApi() is a new server: an answer the previous test's server still held back is never delivered. */
let generation = 0;
const jitter = async () => {
  if (jitterMs <= 0 || vi.isFakeTimers()) return;
  const mine = generation;
  await new Promise<void>((resolve) => realSetTimeout(resolve, Math.random() * jitterMs));
  if (generation !== mine) await new Promise<never>(() => undefined);
};

/**
 * Replaces `fetch` with a fake server: routes are "METHOD /api/path" (query ignored). The status and the
 * caller's profile answer by default, so the frame's own calls need no setup; anything else unknown is a 404.
 */
export function fakeApi(routes: Record<string, Handler> = {}) {
  generation += 1;
  const calls: FakeRequest[] = [];
  const all: Record<string, Handler> = {
    'GET /api/status': () => ok(statusData()),
    'GET /api/user/self': () => ok(selfUser()),
    ...routes,
  };
  const fetch = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = new URL(String(input), 'http://console.test');
    const method = init.method ?? 'GET';
    const req: FakeRequest = {
      method,
      url,
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(req);
    const handler = all[`${method} ${url.pathname}`];
    const reply = handler ? await handler(req) : fail(404, `no route ${method} ${url.pathname}`);
    await jitter();
    if (reply === 'network-error') throw new TypeError('Failed to fetch');
    return new Response(JSON.stringify(reply.body), { status: reply.status, headers: { 'content-type': 'application/json' } });
  });
  vi.stubGlobal('fetch', fetch);
  return { calls, fetch, callsTo: (method: string, path: string) => calls.filter((c) => c.method === method && c.url.pathname === path) };
}

/** Stores a session as the sign-in does, before the app renders. */
export function storeSession(user: Partial<SelfUser> = {}, token = 'access-1', refreshToken = 'refresh-1'): void {
  const { token: _apiKey, ...stored } = selfUser(user);
  localStorage.setItem('token', token);
  localStorage.setItem('refresh_token', refreshToken);
  localStorage.setItem('user', JSON.stringify(stored));
}
