import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { AppParts } from '../../src/app.js';
import type { FakeOAuth } from '../fake-oauth.js';
import { bearer } from '../harness.js';

export type Provider = 'github' | 'google';

/** The parts of a test app these helpers use: the harness's, or one a suite built itself. */
export interface AppUnderTest {
  app: FastifyInstance;
  ctx: AppParts;
}

/** Switches a provider on with the client the fake has registered, as an admin would in Preferences. */
export async function configureProvider(t: AppUnderTest, fake: FakeOAuth, provider: Provider): Promise<void> {
  const { clientId, clientSecret } = fake.clients[provider];
  const [id, secret, enabled] =
    provider === 'github'
      ? (['GitHubClientId', 'GitHubClientSecret', 'GitHubOAuthEnabled'] as const)
      : (['GoogleClientId', 'GoogleClientSecret', 'GoogleOAuthEnabled'] as const);
  await t.ctx.options.set(id, clientId);
  await t.ctx.options.set(secret, clientSecret);
  await t.ctx.options.set(enabled, 'true');
}

export interface Started {
  res: LightMyRequestResponse;
  /** The authorize page the console would send the browser to. */
  url: URL;
  /** `name=value` of the cookie the start set, ready for a Cookie header. */
  cookie: string;
}

/** The console asks where to send the browser (with `token`, to link the provider to that user). */
export async function startSignIn(
  t: AppUnderTest,
  provider: Provider,
  opts: { token?: string; headers?: Record<string, string> } = {},
): Promise<Started> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/oauth/${provider}/authorize${opts.token ? '?bind=1' : ''}`,
    headers: { ...(opts.token ? bearer(opts.token) : {}), ...opts.headers },
  });
  if (res.statusCode !== 200) throw new Error(`authorize failed: ${res.statusCode} ${res.body}`);
  const setCookie = String(res.headers['set-cookie'] ?? '');
  return { res, url: new URL(res.json().data.url), cookie: setCookie.split(';')[0] ?? '' };
}

/** The browser at the provider: it approves (or declines) and sends the browser back with these parameters. */
export async function visitProvider(url: URL): Promise<Record<string, string>> {
  const res = await fetch(url, { redirect: 'manual' });
  if (res.status !== 302) throw new Error(`the provider answered ${res.status}: ${await res.text()}`);
  return Object.fromEntries(new URL(res.headers.get('location') ?? '').searchParams);
}

/** The console's return page hands the provider's parameters to the API. */
export function finishSignIn(
  t: AppUnderTest,
  provider: Provider,
  params: Record<string, string>,
  opts: { cookie?: string; lang?: string } = {},
) {
  return t.app.inject({
    method: 'GET',
    url: `/api/oauth/${provider}?${new URLSearchParams(params)}`,
    headers: { ...(opts.cookie ? { cookie: opts.cookie } : {}), 'accept-language': opts.lang ?? 'en' },
  });
}

/** The whole round trip through the fake provider, as one browser. */
export async function signInThrough(t: AppUnderTest, provider: Provider, opts: { token?: string; lang?: string } = {}) {
  const started = await startSignIn(t, provider, opts);
  const params = await visitProvider(started.url);
  return finishSignIn(t, provider, params, { cookie: started.cookie, lang: opts.lang });
}
