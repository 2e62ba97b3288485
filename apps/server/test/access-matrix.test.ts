import { Role, UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAccessToken } from '../src/http/access-tokens.js';
import { hashPassword } from '../src/infra/passwords.js';
import { randomToken, sha256 } from '../src/infra/secrets.js';
import { OAuthRepo } from '../src/modules/sign-in-providers/repo.js';
import { issueApiKey } from '../src/modules/users/api-keys.js';
import { type FakeRegistries, startFakeRegistries } from './fake-registries.js';
import { ACCEPT_BOTH, initializeBody, SseReader } from './gateway/raw-http.js';
import { ADMIN_PASSWORD, createTestApp, engines, type TestApp } from './harness.js';
import { serviceRow } from './kits/services.js';
import { apiRoutes, oauthProtocolRoutes, proxyRoutes, routeKey } from './route-table.js';

/**
 * The access matrix (docs/architecture.md §8, docs/api.md): EVERY /api and /proxy route the app registered,
 * called as every kind of caller, must answer the status the table below expects, and no answer may
 * carry a secret the caller must not see. A route registered without a row here fails the suite: its
 * access is a decision to write down, not a default. A row for a route that no longer exists fails too.
 *
 * Callers: no token, a garbage token, a disabled user (token issued before the admin disabled them),
 * a role-1 user, an admin (10) and the super admin root (100). The console API takes an access token,
 * the proxy the same caller's API key. The last tests check one user against another user's things.
 */

const ROLES = ['none', 'garbage', 'disabled', 'user', 'admin', 'super'] as const;
type Caller = (typeof ROLES)[number];
type Expect = Record<Caller, number>;
const SIGNED_IN: Caller[] = ['user', 'admin', 'super'];
const isAdminCaller = (c: Caller) => c === 'admin' || c === 'super';

/** Anyone gets this status (public routes, and methods a route does not serve). */
const anyone = (status: number): Expect => ({
  none: status,
  garbage: status,
  disabled: status,
  user: status,
  admin: status,
  super: status,
});
/** A console route for every signed-in, enabled user. */
const signedIn = (status: number): Expect => ({ none: 401, garbage: 401, disabled: 401, user: status, admin: status, super: status });
/** A console route for admins (role >= 10). */
const adminOnly = (status: number): Expect => ({ none: 401, garbage: 401, disabled: 401, user: 403, admin: status, super: status });
/** A proxy route: an enabled user's API key. */
const withKey = signedIn;

// Values seeded into the places secrets live. None may reach a caller who must not see it.
const tag = randomToken(6);
const SECRETS = {
  envSecret: `env-secret-${tag}-value`,
  envPlain: `env-plain-${tag}-value`,
  headerAuth: `header-auth-${tag}-value`,
  headerKey: `header-key-${tag}-value`,
  urlQuery: `url-query-${tag}-value`,
  githubSecret: `gh-client-secret-${tag}`,
  googleSecret: `google-client-secret-${tag}`,
  secretKey: `matrix-secret-key-${tag}-0123456789abcdefghijklmnop`,
  password: `matrix-password-${tag}`,
};
/** Values users store for themselves: masked even for their owner, never shown to anyone. */
const personalOf = (who: string) => `personal-${who}-${tag}-value`;

/** The `data` of an API envelope. */
const dataOf = async <T>(res: Response): Promise<T> => ((await res.json()) as { data: T }).data;

const FIXTURE = new URL('./fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;

interface Call {
  method: string;
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * An event stream: 'event' reads it up to its first event, 'open' only sees it open (a session's
   * GET stream is silent until the server has something to say); then the connection is closed.
   */
  stream?: 'event' | 'open';
  /** Runs after the answer (closes streams the call needed open). */
  cleanup?: () => Promise<void>;
}

interface Row {
  expect: Expect;
  call: (caller: Caller) => Promise<Call> | Call;
}

interface Answer {
  status: number;
  text: string;
}

interface Account {
  id: number;
  username: string;
}

describe.each(engines)('access matrix on %s', (engine) => {
  let t: TestApp;
  let fake: FakeRegistries;
  let base: string;
  const accounts = {} as Record<'user' | 'admin' | 'super' | 'disabled' | 'other' | 'login', Account>;
  let disabledToken: string;
  let stdioId: number;
  let remoteId: number;
  let toggleId: number;
  let groupId: number;
  let installTaskId: string;
  let batchTaskId: string;
  const services = () => t.ctx.services.rows;
  let counter = 0;
  const unique = (prefix: string) =>
    `${prefix}-${engine}-${++counter}-${randomToken(3)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, 'x')}`;

  // ---- callers ---------------------------------------------------------------------------------

  const rowOf = async (id: number) => {
    const row = await t.ctx.usersRepo.byId(id);
    if (!row) throw new Error(`user ${id} is gone`);
    return row;
  };
  const accountOf = (c: Caller): Account | undefined =>
    c === 'user' || c === 'admin' || c === 'super' || c === 'disabled' ? accounts[c] : undefined;
  /** A console access token as sign-in would issue it now (so a rotated auth version is honoured). */
  const freshToken = async (id: number) =>
    signAccessToken(t.ctx.secrets.jwtKey, { userId: id, authVersion: (await rowOf(id)).auth_version });
  const apiKeyOf = async (id: number) => t.ctx.secrets.decrypt((await rowOf(id)).api_key_enc);
  const consoleToken = async (c: Caller): Promise<string | undefined> => {
    if (c === 'none') return undefined;
    if (c === 'garbage') return 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.garbage-signature';
    if (c === 'disabled') return disabledToken;
    return freshToken(accounts[c].id);
  };
  const proxyKey = async (c: Caller): Promise<string | undefined> => {
    if (c === 'none') return undefined;
    if (c === 'garbage') return `tpk_${'A'.repeat(40)}`;
    return apiKeyOf((accountOf(c) as Account).id);
  };
  /** The key whose sessions a caller's proxy call names: its own, or (without a usable key) the role-1 user's. */
  const sessionKeyOf = async (c: Caller) => (await proxyKey(SIGNED_IN.includes(c) ? c : 'user')) as string;

  async function insertUser(username: string, role: number, status: number = UserStatus.Enabled): Promise<Account> {
    const key = issueApiKey(t.ctx.secrets);
    const now = Date.now();
    const row = await t.ctx.usersRepo.insert({
      username,
      display_name: username,
      email: `${username}@example.test`,
      password_hash: await hashPassword(SECRETS.password),
      role,
      status,
      api_key_hash: key.hash,
      api_key_enc: key.encrypted,
      created_at: now,
      updated_at: now,
    });
    return { id: row.id, username };
  }
  const victim = () => insertUser(unique('victim'), Role.User);

  // ---- HTTP ------------------------------------------------------------------------------------

  async function firstEvent(res: Response): Promise<string> {
    const reader = SseReader.of(res);
    let timer: NodeJS.Timeout | undefined;
    try {
      const event = await Promise.race([
        reader.next(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no event within 10 s')), 10_000);
        }),
      ]);
      return `event: ${event.event}\ndata: ${event.data}`;
    } finally {
      clearTimeout(timer);
      await reader.cancel().catch(() => undefined);
    }
  }

  async function send(call: Call, caller: Caller): Promise<Answer> {
    const keyed = call.url.startsWith('/proxy/') || call.url.startsWith('/group/') || call.url.startsWith('/openapi/');
    const credential = keyed ? await proxyKey(caller) : await consoleToken(caller);
    const headers: Record<string, string> = {
      ...(credential ? { authorization: `Bearer ${credential}` } : {}),
      ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(keyed ? { accept: ACCEPT_BOTH } : {}),
      ...call.headers,
    };
    const res = await fetch(`${base}${call.url}`, {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : typeof call.body === 'string' ? call.body : JSON.stringify(call.body),
      redirect: 'manual',
    });
    const streaming = call.stream && res.status === 200 && (res.headers.get('content-type') ?? '').includes('text/event-stream');
    let text: string;
    if (!streaming) text = await res.text();
    else if (call.stream === 'event') text = await firstEvent(res);
    else {
      await res.body?.cancel();
      text = '';
    }
    await call.cleanup?.();
    const head = [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
    return { status: res.status, text: `${head}\n\n${text}` };
  }

  /** A streamable HTTP session of the holder of `key`, initialized by hand. */
  async function mcpSession(key: string, face = '/proxy/matrix-stdio'): Promise<string> {
    const res = await fetch(`${base}${face}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, accept: ACCEPT_BOTH, 'content-type': 'application/json' },
      body: JSON.stringify(initializeBody()),
    });
    const text = await res.text();
    const id = res.headers.get('mcp-session-id');
    if (res.status !== 200 || !id) throw new Error(`initialize failed: ${res.status} ${text}`);
    return id;
  }

  /** A legacy SSE session of the holder of `key`: its message URL, and how to close its stream. */
  async function legacySession(key: string, face = '/proxy/matrix-stdio'): Promise<{ endpoint: string; close: () => Promise<void> }> {
    const res = await fetch(`${base}${face}/sse`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
    if (res.status !== 200) throw new Error(`sse failed: ${res.status}`);
    const reader = SseReader.of(res);
    const event = await reader.next();
    if (event.event !== 'endpoint') throw new Error(`first event is ${event.event}`);
    const endpoint = new URL(event.data, base);
    return { endpoint: `${endpoint.pathname}${endpoint.search}`, close: () => reader.cancel().catch(() => undefined) };
  }

  // ---- secrets that answers must not carry -----------------------------------------------------

  /** Every API key any user ever had here: the current ones are read again after each call (rotations). */
  const everKeys = new Set<string>();
  async function knownKeys(): Promise<Map<number, string>> {
    const rows = await t.ctx.db.selectFrom('users').select(['id', 'api_key_enc', 'api_key_hash']).execute();
    const current = new Map<number, string>();
    for (const r of rows) {
      const plain = t.ctx.secrets.decrypt(r.api_key_enc);
      current.set(r.id, plain);
      everKeys.add(plain);
    }
    return current;
  }

  /** What `caller` must not find in an answer: labelled so a failure says which secret leaked. */
  async function forbiddenFor(caller: Caller): Promise<[string, string][]> {
    const current = await knownKeys();
    const own = accountOf(caller) && caller !== 'disabled' ? current.get((accountOf(caller) as Account).id) : undefined;
    const rows = await t.ctx.db.selectFrom('users').select(['api_key_hash', 'api_key_enc', 'password_hash']).execute();
    const list: [string, string][] = [
      ['password hash', '$argon2'],
      ['SECRET_KEY', SECRETS.secretKey],
      ['GitHub client secret', SECRETS.githubSecret],
      ['Google client secret', SECRETS.googleSecret],
      ['a password', SECRETS.password],
      ['a password', ADMIN_PASSWORD],
      ...ROLES.concat().map((r): [string, string] => ['a personal value', personalOf(r)]),
      ['a personal value', personalOf('other')],
    ];
    for (const key of everKeys) if (key !== own) list.push(['an API key not the caller’s', key]);
    for (const r of rows) {
      list.push(['an API key hash', r.api_key_hash], ['an encrypted API key', r.api_key_enc]);
      if (r.password_hash) list.push(['a password hash', r.password_hash]);
    }
    if (!isAdminCaller(caller)) {
      list.push(
        ['a service variable value', SECRETS.envSecret],
        ['a non-secret service variable value', SECRETS.envPlain],
        ['a header value', SECRETS.headerAuth],
        ['a header value', SECRETS.headerKey],
        ['a credential in a service URL', SECRETS.urlQuery],
      );
    }
    return list;
  }

  async function leaksIn(answer: Answer, caller: Caller): Promise<string[]> {
    const found: string[] = [];
    for (const [label, value] of await forbiddenFor(caller)) if (answer.text.includes(value)) found.push(label);
    return [...new Set(found)];
  }

  // ---- the expectation table (docs/api.md) ---------------------------------------------------

  const get = (url: string): Call => ({ method: 'GET', url });
  const json = (method: string, url: string, body: unknown): Call => ({ method, url, body });
  const notAllowed = (method: string, url: string): Row => ({ expect: anyone(405), call: () => ({ method, url }) });

  const table: Record<string, Row> = {
    // Status and auth
    'GET /api/status': { expect: anyone(200), call: () => get('/api/status') },
    'GET /api/health': { expect: anyone(200), call: () => get('/api/health') },
    'GET /api/ready': { expect: anyone(200), call: () => get('/api/ready') },
    'POST /api/auth/login': {
      expect: anyone(200),
      call: () => json('POST', '/api/auth/login', { username: accounts.login.username, password: SECRETS.password }),
    },
    'POST /api/auth/refresh': {
      expect: anyone(200),
      call: async () => {
        const token = randomToken(32);
        await t.ctx.auth.refreshTokens.insert(accounts.login.id, sha256(token), Date.now() + 3_600_000);
        return json('POST', '/api/auth/refresh', { refresh_token: token });
      },
    },
    'POST /api/auth/logout': { expect: signedIn(200), call: () => json('POST', '/api/auth/logout', {}) },
    'GET /api/oauth/github/authorize': { expect: anyone(200), call: () => get('/api/oauth/github/authorize') },
    'GET /api/oauth/google/authorize': { expect: anyone(200), call: () => get('/api/oauth/google/authorize') },
    // A state this server never issued: refused before any provider is asked.
    'GET /api/oauth/github': { expect: anyone(400), call: () => get('/api/oauth/github?code=c&state=forged-state') },
    'GET /api/oauth/google': { expect: anyone(400), call: () => get('/api/oauth/google?code=c&state=forged-state&code_verifier=v') },
    // No OpenID Connect provider is configured here: a slug names none, for anyone (oidc.test.ts signs in through one).
    'GET /api/oauth/oidc/:slug/authorize': { expect: anyone(404), call: () => get('/api/oauth/oidc/nobody/authorize') },
    'GET /api/oauth/oidc/:slug': { expect: anyone(404), call: () => get('/api/oauth/oidc/nobody?code=c&state=forged-state') },

    // Users
    'GET /api/user/self': { expect: signedIn(200), call: () => get('/api/user/self') },
    'PUT /api/user/self': { expect: signedIn(200), call: (c) => json('PUT', '/api/user/self', { display_name: `Matrix ${c}` }) },
    'POST /api/user/change-password': {
      expect: signedIn(200),
      call: (c) => {
        const current = c === 'super' ? ADMIN_PASSWORD : SECRETS.password;
        return json('POST', '/api/user/change-password', { current_password: current, new_password: current });
      },
    },
    'GET /api/user/token': { expect: signedIn(200), call: () => get('/api/user/token') },
    'POST /api/user/token': { expect: signedIn(200), call: () => json('POST', '/api/user/token', {}) },
    'GET /api/user/': { expect: adminOnly(200), call: () => get('/api/user/?p=0') },
    'GET /api/user/search': { expect: adminOnly(200), call: () => get('/api/user/search?keyword=matrix') },
    'POST /api/user': {
      expect: adminOnly(201),
      call: () => json('POST', '/api/user', { username: unique('created'), display_name: 'Created', password: SECRETS.password }),
    },
    'PUT /api/user': {
      expect: adminOnly(200),
      call: async () => {
        const v = await victim();
        return json('PUT', '/api/user', { id: v.id, username: v.username, display_name: 'Edited', password: SECRETS.password });
      },
    },
    'DELETE /api/user/:id': { expect: adminOnly(200), call: async () => ({ method: 'DELETE', url: `/api/user/${(await victim()).id}` }) },
    'POST /api/user/manage': {
      expect: adminOnly(200),
      call: async () => json('POST', '/api/user/manage', { username: (await victim()).username, action: 'disable' }),
    },
    'DELETE /api/user/bindings/:provider': { expect: signedIn(200), call: () => ({ method: 'DELETE', url: '/api/user/bindings/github' }) },
    // Provider identities of other users, linked and unlinked by an admin (decision 0063)
    'GET /api/user/:id/identities': { expect: adminOnly(200), call: async () => get(`/api/user/${(await victim()).id}/identities`) },
    'POST /api/user/:id/identities': {
      expect: adminOnly(200),
      call: async () => json('POST', `/api/user/${(await victim()).id}/identities`, { provider: 'github', subject: unique('gh') }),
    },
    'DELETE /api/user/:id/identities/:identityId': {
      expect: adminOnly(404),
      call: async () => ({ method: 'DELETE', url: `/api/user/${(await victim()).id}/identities/999999` }),
    },
    'GET /api/user/held_identities': { expect: adminOnly(200), call: () => get('/api/user/held_identities') },
    'DELETE /api/user/held_identities/:id': {
      expect: adminOnly(404),
      call: () => ({ method: 'DELETE', url: '/api/user/held_identities/999999' }),
    },

    // Toolport as the OAuth server of its MCP endpoints: the console's side (modules/authorization-server)
    'GET /api/oauth-server/requests/:id': { expect: signedIn(404), call: () => get('/api/oauth-server/requests/no-such-request') },
    'POST /api/oauth-server/requests/:id': {
      expect: signedIn(404),
      call: () => json('POST', '/api/oauth-server/requests/no-such-request', { allow: true }),
    },
    'GET /api/oauth-server/grants': { expect: signedIn(200), call: () => get('/api/oauth-server/grants') },
    'DELETE /api/oauth-server/grants/:id': {
      expect: signedIn(404),
      call: () => ({ method: 'DELETE', url: '/api/oauth-server/grants/999999' }),
    },
    'GET /api/oauth-server/users/:userId/grants': {
      expect: adminOnly(200),
      call: () => get(`/api/oauth-server/users/${accounts.user.id}/grants`),
    },
    'DELETE /api/oauth-server/users/:userId/grants/:id': {
      expect: adminOnly(404),
      call: () => ({ method: 'DELETE', url: `/api/oauth-server/users/${accounts.user.id}/grants/999999` }),
    },
    // The protocol side: public by design (machines call it before they have anything), OAuth errors for bad input.
    'GET /.well-known/oauth-authorization-server': { expect: anyone(200), call: () => get('/.well-known/oauth-authorization-server') },
    'GET /.well-known/openid-configuration': { expect: anyone(200), call: () => get('/.well-known/openid-configuration') },
    'GET /.well-known/oauth-protected-resource': { expect: anyone(200), call: () => get('/.well-known/oauth-protected-resource') },
    'GET /.well-known/oauth-protected-resource/proxy/:name/mcp': {
      expect: anyone(200),
      call: () => get('/.well-known/oauth-protected-resource/proxy/matrix-stdio/mcp'),
    },
    'GET /.well-known/oauth-protected-resource/proxy/:name/sse': {
      expect: anyone(200),
      call: () => get('/.well-known/oauth-protected-resource/proxy/matrix-stdio/sse'),
    },
    'GET /.well-known/oauth-protected-resource/group/:name/mcp': {
      expect: anyone(200),
      call: () => get('/.well-known/oauth-protected-resource/group/matrix-group/mcp'),
    },
    ...Object.fromEntries(
      [
        '/.well-known/oauth-authorization-server',
        '/.well-known/openid-configuration',
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-protected-resource/proxy/:name/mcp',
        '/.well-known/oauth-protected-resource/proxy/:name/sse',
        '/.well-known/oauth-protected-resource/group/:name/mcp',
        '/oauth2/token',
        '/oauth2/register',
        '/oauth2/revoke',
      ].map((url): [string, Row] => [
        `OPTIONS ${url}`,
        { expect: anyone(204), call: () => ({ method: 'OPTIONS', url: url.replace(':name', 'matrix-stdio') }) },
      ]),
    ),
    'GET /oauth2/authorize': { expect: anyone(400), call: () => get('/oauth2/authorize?response_type=code') },
    'POST /oauth2/token': { expect: anyone(400), call: () => json('POST', '/oauth2/token', { grant_type: 'authorization_code' }) },
    'POST /oauth2/revoke': { expect: anyone(400), call: () => json('POST', '/oauth2/revoke', {}) },
    'POST /oauth2/register': {
      expect: anyone(201),
      call: () => json('POST', '/oauth2/register', { client_name: 'Matrix', redirect_uris: ['http://127.0.0.1/cb'] }),
    },

    // Preferences
    'GET /api/option/': { expect: adminOnly(200), call: () => get('/api/option/') },
    'PUT /api/option/': {
      expect: adminOnly(200),
      call: () => json('PUT', '/api/option/', { key: 'GitHubClientSecret', value: SECRETS.githubSecret }),
    },
    // Discovery's embeddings provider: its state, and a check of it (none is configured here).
    'GET /api/option/embeddings': { expect: adminOnly(200), call: () => get('/api/option/embeddings') },
    'POST /api/option/embeddings/check': { expect: adminOnly(200), call: () => json('POST', '/api/option/embeddings/check', {}) },

    // Installed services
    'GET /api/mcp_market/installed': { expect: signedIn(200), call: () => get('/api/mcp_market/installed') },
    'PUT /api/mcp_services/:id': { expect: adminOnly(200), call: () => json('PUT', `/api/mcp_services/${remoteId}`, { rpd_limit: 0 }) },
    'POST /api/mcp_services/:id/toggle': { expect: signedIn(200), call: () => json('POST', `/api/mcp_services/${toggleId}/toggle`, {}) },
    // The remote service cannot be reached: its failure details must not quote its URL's credentials.
    'POST /api/mcp_services/:id/health/check': {
      expect: signedIn(200),
      call: () => json('POST', `/api/mcp_services/${remoteId}/health/check`, {}),
    },
    // Update of a service that runs no installed package: refused with the reason, to admins only.
    'POST /api/mcp_services/:id/update_package': {
      expect: adminOnly(400),
      call: () => json('POST', `/api/mcp_services/${remoteId}/update_package`, {}),
    },
    'POST /api/mcp_services/:id/reconnect': {
      expect: adminOnly(200),
      call: () => json('POST', `/api/mcp_services/${remoteId}/reconnect`, {}),
    },
    'POST /api/mcp_market/uninstall': {
      expect: adminOnly(200),
      call: async () => {
        const row = await services().insert(
          serviceRow({ name: unique('uninstall'), type: 'streamableHttp', command: 'http://127.0.0.1:9/mcp' }),
        );
        return json('POST', '/api/mcp_market/uninstall', { service_id: row.id });
      },
    },
    'GET /api/mcp_services/:id/my_env': { expect: signedIn(200), call: () => get(`/api/mcp_services/${stdioId}/my_env`) },
    // Upstream OAuth (issue 19): tokens are never in any answer; the shared connection is for admins to make.
    'GET /api/mcp_services/:id/oauth': { expect: signedIn(200), call: () => get(`/api/mcp_services/${remoteId}/oauth`) },
    'PUT /api/mcp_services/:id/oauth': {
      expect: adminOnly(200),
      call: async () => {
        const row = await services().insert(
          serviceRow({ name: unique('oauth'), type: 'streamableHttp', command: 'http://127.0.0.1:9/mcp' }),
        );
        return json('PUT', `/api/mcp_services/${row.id}/oauth`, { oauth_mode: 'per_user' });
      },
    },
    // Nothing answers at port 9: an admin is told discovery failed (400); a user may not start the shared connection.
    'POST /api/mcp_services/:id/oauth/connect': {
      expect: { none: 401, garbage: 401, disabled: 401, user: 403, admin: 400, super: 400 },
      call: async () => {
        const row = await services().insert(
          serviceRow({ name: unique('oauth'), type: 'streamableHttp', command: 'http://127.0.0.1:9/mcp' }),
        );
        return json('POST', `/api/mcp_services/${row.id}/oauth/connect`, {});
      },
    },
    'POST /api/mcp_services/:id/oauth/disconnect': {
      expect: signedIn(400),
      call: () => json('POST', `/api/mcp_services/${stdioId}/oauth/disconnect`, {}),
    },
    'GET /api/upstream_oauth/callback': { expect: anyone(302), call: () => get('/api/upstream_oauth/callback?code=c&state=forged-state') },
    'GET /api/upstream_oauth/client_metadata.json': { expect: anyone(200), call: () => get('/api/upstream_oauth/client_metadata.json') },
    // Issue 17: tools, overrides, access lists and groups.
    'GET /api/mcp_services/:id/tools': { expect: signedIn(200), call: () => get(`/api/mcp_services/${stdioId}/tools`) },
    'PUT /api/mcp_services/:id/tools/:original_name': {
      expect: adminOnly(200),
      call: () => json('PUT', `/api/mcp_services/${stdioId}/tools/pids`, { description: 'Process ids' }),
    },
    'POST /api/mcp_services/:id/tools/:original_name/call': {
      expect: signedIn(200),
      call: () => json('POST', `/api/mcp_services/${stdioId}/tools/echo/call`, { arguments: { text: 'matrix' } }),
    },
    'GET /api/mcp_services/:id/access': { expect: adminOnly(200), call: () => get(`/api/mcp_services/${stdioId}/access`) },
    'GET /api/groups': { expect: signedIn(200), call: () => get('/api/groups') },
    'POST /api/groups': {
      expect: adminOnly(201),
      call: () => json('POST', '/api/groups', { name: unique('g'), members: [{ service_id: stdioId }] }),
    },
    'GET /api/groups/:id': { expect: signedIn(200), call: () => get(`/api/groups/${groupId}`) },
    'PUT /api/groups/:id': {
      expect: adminOnly(200),
      call: () => json('PUT', `/api/groups/${groupId}`, { name: 'matrix-group', members: [{ service_id: stdioId }] }),
    },
    'DELETE /api/groups/:id': {
      expect: adminOnly(200),
      call: async () => {
        const res = await fetch(`${base}/api/groups`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await freshToken(accounts.super.id)}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: unique('gone'), members: [{ service_id: stdioId }] }),
        });
        return { method: 'DELETE', url: `/api/groups/${(await dataOf<{ id: number }>(res)).id}` };
      },
    },
    'PUT /api/mcp_services/:id/my_env': {
      expect: signedIn(200),
      call: (c) => json('PUT', `/api/mcp_services/${stdioId}/my_env`, { env: { MATRIX_TOKEN: personalOf(c) } }),
    },

    // Marketplace and installs
    'GET /api/mcp_market/search': { expect: signedIn(200), call: () => get('/api/mcp_market/search?query=weather&sources=npm') },
    'GET /api/mcp_market/package_details': {
      expect: signedIn(200),
      call: () => get('/api/mcp_market/package_details?package_name=acme-weather-mcp&package_manager=npm'),
    },
    'POST /api/mcp_market/custom_service': {
      expect: adminOnly(201),
      call: () =>
        json('POST', '/api/mcp_market/custom_service', {
          name: unique('custom'),
          type: 'streamableHttp',
          url: 'http://127.0.0.1:9/mcp',
          headers: { 'X-Matrix-Key': SECRETS.headerKey },
        }),
    },
    'GET /api/mcp_market/install_status/:taskId': {
      expect: adminOnly(200),
      call: () => get(`/api/mcp_market/install_status/${installTaskId}`),
    },
    // Already installed: the admin's own values are added, no registry is asked.
    'POST /api/mcp_market/install_or_add_service': {
      expect: adminOnly(200),
      call: (c) =>
        json('POST', '/api/mcp_market/install_or_add_service', {
          source_type: 'custom',
          package_name: '@matrix/tool',
          package_manager: 'npm',
          user_provided_env_vars: { MATRIX_TOKEN: personalOf(c) },
        }),
    },
    'POST /api/mcp_market/batch-import': {
      expect: adminOnly(200),
      call: () => json('POST', '/api/mcp_market/batch-import', { mcpServers: { 'matrix-stdio': { command: 'npx', args: ['-y', 'x'] } } }),
    },
    // Public for the guard (EventSource sends no headers); the route itself wants an admin's token.
    'GET /api/mcp_market/batch-import/progress/:task_id': {
      expect: adminOnly(200),
      call: () => get(`/api/mcp_market/batch-import/progress/${batchTaskId}`),
    },
    // Values included: that is what an export is for, and only admins may make one.
    'GET /api/mcp_market/export': { expect: adminOnly(200), call: () => get('/api/mcp_market/export') },

    // Analytics and logs
    'GET /api/analytics/system/overview': { expect: signedIn(200), call: () => get('/api/analytics/system/overview') },
    'GET /api/analytics/services/utilization': { expect: signedIn(200), call: () => get('/api/analytics/services/utilization') },
    'GET /api/analytics/history': { expect: signedIn(200), call: () => get('/api/analytics/history') },
    'GET /api/mcp_logs': { expect: adminOnly(200), call: () => get('/api/mcp_logs?page=1&page_size=100') },
    // The audit trail holds every change above, masked: its answers are scanned like any other.
    'GET /api/audit': { expect: adminOnly(200), call: () => get('/api/audit?page=1&page_size=100') },
    'GET /api/audit/export': { expect: adminOnly(200), call: () => get('/api/audit/export') },

    // The API's own documentation is public, like the routes it describes.
    'GET /api/docs': { expect: anyone(200), call: () => get('/api/docs') },
    'GET /api/docs/static/index.html': { expect: anyone(302), call: () => get('/api/docs/static/index.html') },
    'GET /api/docs/static/swagger-initializer.js': { expect: anyone(200), call: () => get('/api/docs/static/swagger-initializer.js') },
    'GET /api/docs/static/*': { expect: anyone(200), call: () => get('/api/docs/static/swagger-ui.css') },
    'GET /api/docs/json': { expect: anyone(200), call: () => get('/api/docs/json') },
    'GET /api/docs/yaml': { expect: anyone(200), call: () => get('/api/docs/yaml') },
    'GET /api/docs/openapi.json': { expect: anyone(200), call: () => get('/api/docs/openapi.json') },

    // The proxy: streamable HTTP
    'POST /proxy/:name/mcp': { expect: withKey(200), call: () => json('POST', '/proxy/matrix-stdio/mcp', initializeBody()) },
    'GET /proxy/:name/mcp': {
      expect: withKey(200),
      call: async (c) => ({
        method: 'GET',
        url: '/proxy/matrix-stdio/mcp',
        headers: { 'mcp-session-id': await mcpSession(await sessionKeyOf(c)), 'mcp-protocol-version': '2025-06-18' },
        stream: 'open',
      }),
    },
    'DELETE /proxy/:name/mcp': {
      expect: withKey(200),
      call: async (c) => ({
        method: 'DELETE',
        url: '/proxy/matrix-stdio/mcp',
        headers: { 'mcp-session-id': await mcpSession(await sessionKeyOf(c)), 'mcp-protocol-version': '2025-06-18' },
      }),
    },
    'PUT /proxy/:name/mcp': notAllowed('PUT', '/proxy/matrix-stdio/mcp'),
    'PATCH /proxy/:name/mcp': notAllowed('PATCH', '/proxy/matrix-stdio/mcp'),
    'OPTIONS /proxy/:name/mcp': notAllowed('OPTIONS', '/proxy/matrix-stdio/mcp'),

    // The proxy: the 2024-11-05 HTTP+SSE transport
    'GET /proxy/:name/sse': { expect: withKey(200), call: () => ({ method: 'GET', url: '/proxy/matrix-stdio/sse', stream: 'event' }) },
    'POST /proxy/:name/message': {
      expect: withKey(202),
      call: async (c) => {
        const session = await legacySession(await sessionKeyOf(c));
        return { method: 'POST', url: session.endpoint, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, cleanup: session.close };
      },
    },
    'PUT /proxy/:name/sse': notAllowed('PUT', '/proxy/matrix-stdio/sse'),
    'PATCH /proxy/:name/sse': notAllowed('PATCH', '/proxy/matrix-stdio/sse'),
    'OPTIONS /proxy/:name/sse': notAllowed('OPTIONS', '/proxy/matrix-stdio/sse'),
    'POST /proxy/:name/sse': notAllowed('POST', '/proxy/matrix-stdio/sse'),
    'DELETE /proxy/:name/sse': notAllowed('DELETE', '/proxy/matrix-stdio/sse'),
    'PUT /proxy/:name/message': notAllowed('PUT', '/proxy/matrix-stdio/message'),
    'PATCH /proxy/:name/message': notAllowed('PATCH', '/proxy/matrix-stdio/message'),
    'OPTIONS /proxy/:name/message': notAllowed('OPTIONS', '/proxy/matrix-stdio/message'),
    'GET /proxy/:name/message': notAllowed('GET', '/proxy/matrix-stdio/message'),
    'DELETE /proxy/:name/message': notAllowed('DELETE', '/proxy/matrix-stdio/message'),
    // A group's face: streamable HTTP
    'POST /group/:name/mcp': { expect: withKey(200), call: () => json('POST', '/group/matrix-group/mcp', initializeBody()) },
    'GET /group/:name/mcp': {
      expect: withKey(200),
      call: async (c) => ({
        method: 'GET',
        url: '/group/matrix-group/mcp',
        headers: { 'mcp-session-id': await mcpSession(await sessionKeyOf(c), '/group/matrix-group'), 'mcp-protocol-version': '2025-06-18' },
        stream: 'open',
      }),
    },
    'DELETE /group/:name/mcp': {
      expect: withKey(200),
      call: async (c) => ({
        method: 'DELETE',
        url: '/group/matrix-group/mcp',
        headers: { 'mcp-session-id': await mcpSession(await sessionKeyOf(c), '/group/matrix-group'), 'mcp-protocol-version': '2025-06-18' },
      }),
    },
    'PUT /group/:name/mcp': notAllowed('PUT', '/group/matrix-group/mcp'),
    'PATCH /group/:name/mcp': notAllowed('PATCH', '/group/matrix-group/mcp'),
    'OPTIONS /group/:name/mcp': notAllowed('OPTIONS', '/group/matrix-group/mcp'),

    // A group's face: the 2024-11-05 HTTP+SSE transport
    'GET /group/:name/sse': { expect: withKey(200), call: () => ({ method: 'GET', url: '/group/matrix-group/sse', stream: 'event' }) },
    'POST /group/:name/message': {
      expect: withKey(202),
      call: async (c) => {
        const session = await legacySession(await sessionKeyOf(c), '/group/matrix-group');
        return { method: 'POST', url: session.endpoint, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, cleanup: session.close };
      },
    },
    'PUT /group/:name/sse': notAllowed('PUT', '/group/matrix-group/sse'),
    'PATCH /group/:name/sse': notAllowed('PATCH', '/group/matrix-group/sse'),
    'OPTIONS /group/:name/sse': notAllowed('OPTIONS', '/group/matrix-group/sse'),
    'POST /group/:name/sse': notAllowed('POST', '/group/matrix-group/sse'),
    'DELETE /group/:name/sse': notAllowed('DELETE', '/group/matrix-group/sse'),
    'PUT /group/:name/message': notAllowed('PUT', '/group/matrix-group/message'),
    'PATCH /group/:name/message': notAllowed('PATCH', '/group/matrix-group/message'),
    'OPTIONS /group/:name/message': notAllowed('OPTIONS', '/group/matrix-group/message'),
    'GET /group/:name/message': notAllowed('GET', '/group/matrix-group/message'),
    'DELETE /group/:name/message': notAllowed('DELETE', '/group/matrix-group/message'),

    // The OpenAPI face (decision 0053): the MCP faces' API keys and access, a document and a call per tool.
    'GET /openapi/proxy/:name/openapi.json': { expect: withKey(200), call: () => get('/openapi/proxy/matrix-stdio/openapi.json') },
    'POST /openapi/proxy/:name/:tool': {
      expect: withKey(200),
      call: () => json('POST', '/openapi/proxy/matrix-stdio/echo', { text: 'm' }),
    },
    'GET /openapi/proxy/:name/:tool': notAllowed('GET', '/openapi/proxy/matrix-stdio/echo'),
    'OPTIONS /openapi/proxy/:name/openapi.json': notAllowed('OPTIONS', '/openapi/proxy/matrix-stdio/openapi.json'),
    'OPTIONS /openapi/proxy/:name/:tool': notAllowed('OPTIONS', '/openapi/proxy/matrix-stdio/echo'),
    'GET /openapi/group/:name/openapi.json': { expect: withKey(200), call: () => get('/openapi/group/matrix-group/openapi.json') },
    'POST /openapi/group/:name/:tool': {
      expect: withKey(200),
      call: () => json('POST', '/openapi/group/matrix-group/matrix-stdio__echo', { text: 'm' }),
    },
    'GET /openapi/group/:name/:tool': notAllowed('GET', '/openapi/group/matrix-group/matrix-stdio__echo'),
    'OPTIONS /openapi/group/:name/openapi.json': notAllowed('OPTIONS', '/openapi/group/matrix-group/openapi.json'),
    'OPTIONS /openapi/group/:name/:tool': notAllowed('OPTIONS', '/openapi/group/matrix-group/matrix-stdio__echo'),
  };

  // ---- seeding ---------------------------------------------------------------------------------

  beforeAll(async () => {
    fake = await startFakeRegistries();
    // Refused callers of both MCP faces (/proxy and /group) exceed the default 30 refused authentications a
    // minute from one address; that limit has its own suite (gateway/abuse-limits.test.ts).
    t = await createTestApp(engine, { ...fake.env, SECRET_KEY: SECRETS.secretKey, PROXY_AUTH_FAILURES_PER_MINUTE: '200' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening on TCP');
    base = `http://127.0.0.1:${address.port}`;

    const root = await t.ctx.usersRepo.byUsername('root');
    if (!root) throw new Error('no root');
    accounts.super = { id: root.id, username: 'root' };
    accounts.user = await insertUser(unique('matrix-user'), Role.User);
    accounts.admin = await insertUser(unique('matrix-admin'), Role.Admin);
    accounts.other = await insertUser(unique('matrix-other'), Role.User);
    accounts.login = await insertUser(unique('matrix-login'), Role.User);
    accounts.disabled = await insertUser(unique('matrix-disabled'), Role.User);
    disabledToken = await freshToken(accounts.disabled.id);
    const disable = await fetch(`${base}/api/user/manage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await freshToken(root.id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: accounts.disabled.username, action: 'disable' }),
    });
    expect(disable.status).toBe(200);

    // Sign-in with GitHub and Google configured, secrets included.
    for (const [key, value] of Object.entries({
      GitHubClientId: 'matrix-github-client',
      GitHubClientSecret: SECRETS.githubSecret,
      GitHubOAuthEnabled: 'true',
      GoogleClientId: 'matrix-google-client',
      GoogleClientSecret: SECRETS.googleSecret,
      GoogleOAuthEnabled: 'true',
    }))
      await t.ctx.options.set(key, value);
    const oauth = new OAuthRepo(t.ctx.db);
    for (const a of [accounts.user, accounts.admin, accounts.super, accounts.other])
      await oauth.addIdentity(a.id, { provider: 'github', provider_user_id: `gh-${a.id}`, email: '', created_at: Date.now() });

    // A stdio service with a secret and a plain variable, installed "from npm" so install_or_add finds it.
    const seal = (v: unknown) => t.ctx.secrets.encryptJson(v);
    stdioId = (
      await services().insert(
        serviceRow({
          name: 'matrix-stdio',
          source: 'npm',
          package_manager: 'npm',
          package_name: '@matrix/tool',
          command: process.execPath,
          args_json: JSON.stringify([FIXTURE]),
          env_enc: seal({ MATRIX_TOKEN: SECRETS.envSecret, MATRIX_REGION: SECRETS.envPlain }),
          env_schema_json: JSON.stringify([
            { name: 'MATRIX_TOKEN', description: 'token', is_secret: true },
            { name: 'MATRIX_REGION', description: 'region', is_secret: false },
          ]),
        }),
      )
    ).id;
    // A remote service with credentials in its headers and its URL, which cannot be reached.
    remoteId = (
      await services().insert(
        serviceRow({
          name: 'matrix-remote',
          type: 'streamableHttp',
          command: `http://127.0.0.1:9/mcp?api_key=${SECRETS.urlQuery}`,
          headers_enc: seal({ Authorization: `Bearer ${SECRETS.headerAuth}`, 'X-Matrix-Key': SECRETS.headerKey }),
        }),
      )
    ).id;
    toggleId = (await services().insert(serviceRow({ name: 'matrix-toggle', type: 'sse', command: 'http://127.0.0.1:9/sse', enabled: 0 })))
      .id;
    const group = await fetch(`${base}/api/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await freshToken(accounts.super.id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'matrix-group', members: [{ service_id: stdioId }] }),
    });
    groupId = (await dataOf<{ id: number }>(group)).id;

    // Another user's personal value, through the API.
    const other = await fetch(`${base}/api/mcp_services/${stdioId}/my_env`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await freshToken(accounts.other.id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ env: { MATRIX_TOKEN: personalOf('other') } }),
    });
    expect(other.status).toBe(200);

    // An install task (a custom stdio service's first check) and a finished batch import.
    const rootHeaders = { authorization: `Bearer ${await freshToken(root.id)}`, 'content-type': 'application/json' };
    const custom = await fetch(`${base}/api/mcp_market/custom_service`, {
      method: 'POST',
      headers: rootHeaders,
      body: JSON.stringify({
        name: 'matrix-custom',
        type: 'stdio',
        command: `${process.execPath} ${FIXTURE}`,
        environments: { MATRIX_TOKEN: SECRETS.envSecret },
      }),
    });
    expect(custom.status).toBe(201);
    installTaskId = (await dataOf<{ task_id: string }>(custom)).task_id;
    const batch = await fetch(`${base}/api/mcp_market/batch-import`, {
      method: 'POST',
      headers: rootHeaders,
      body: JSON.stringify({ mcpServers: { 'matrix-stdio': { command: 'npx', args: ['-y', 'x'] } } }),
    });
    expect(batch.status).toBe(200);
    batchTaskId = (await dataOf<{ task_id: string }>(batch)).task_id;
    await knownKeys();
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  // ---- the matrix ------------------------------------------------------------------------------

  it('has an expectation for every /api and /proxy route, and none for a route that is gone', () => {
    const registered = [...apiRoutes(t.routes), ...proxyRoutes(t.routes), ...oauthProtocolRoutes(t.routes)].map(routeKey);
    expect(registered.length).toBeGreaterThan(60);
    expect(
      registered.filter((k) => !(k in table)),
      'routes without a row in the access matrix',
    ).toEqual([]);
    expect(
      Object.keys(table).filter((k) => !registered.includes(k)),
      'rows for routes that no longer exist',
    ).toEqual([]);
  });

  it('answers every route with the expected status for every caller, and never with a secret', { timeout: 240_000 }, async () => {
    const wrong: string[] = [];
    const leaks: string[] = [];
    const registered = [...apiRoutes(t.routes), ...proxyRoutes(t.routes), ...oauthProtocolRoutes(t.routes)]
      .map(routeKey)
      .filter((k) => k in table);
    for (const key of registered) {
      const row = table[key] as Row;
      for (const caller of ROLES) {
        const answer = await send(await row.call(caller), caller);
        if (answer.status !== row.expect[caller])
          wrong.push(
            `${key} as ${caller}: ${answer.status}, expected ${row.expect[caller]} (${answer.text.split('\n\n').pop()?.slice(0, 160)})`,
          );
        for (const label of await leaksIn(answer, caller)) leaks.push(`${key} as ${caller}: ${label}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(leaks).toEqual([]);
  });

  // ---- one user against another user's things --------------------------------------------------

  it('shows nobody another user’s personal values, or even which variables they set', async () => {
    const asUser = await send(get(`/api/mcp_services/${stdioId}/my_env`), 'user');
    const asAdmin = await send(get(`/api/mcp_services/${stdioId}/my_env`), 'admin');
    for (const answer of [asUser, asAdmin]) expect(answer.text).not.toContain(personalOf('other'));
    const fresh = await insertUser(unique('fresh'), Role.User);
    const res = await fetch(`${base}/api/mcp_services/${stdioId}/my_env`, {
      headers: { authorization: `Bearer ${await freshToken(fresh.id)}` },
    });
    expect((await dataOf<{ env: Record<string, string> }>(res)).env).toEqual({});
    const installed = await fetch(`${base}/api/mcp_market/installed`, {
      headers: { authorization: `Bearer ${await freshToken(fresh.id)}` },
    });
    const mine = (await dataOf<{ id: number; my_env_names: string[] }[]>(installed)).find((s) => s.id === stdioId);
    expect(mine?.my_env_names).toEqual([]);
  });

  it('refuses a user another user’s usage history, and lets an admin see it', async () => {
    const url = `/api/analytics/history?user_id=${accounts.other.id}`;
    expect((await send(get(url), 'user')).status).toBe(403);
    expect((await send(get(`/api/analytics/history?user_id=${accounts.user.id}`), 'user')).status).toBe(200);
    expect((await send(get(url), 'admin')).status).toBe(200);
  });

  it('keeps an admin away from accounts of equal or higher role', async () => {
    const fellow = await insertUser(unique('fellow-admin'), Role.Admin);
    const cases: [Call, number][] = [
      [json('PUT', '/api/user', { id: accounts.super.id, username: 'root', display_name: 'Taken over' }), 403],
      [json('PUT', '/api/user', { id: fellow.id, username: fellow.username, display_name: 'x', password: 'new-password-1234' }), 403],
      [{ method: 'DELETE', url: `/api/user/${accounts.super.id}` }, 403],
      [{ method: 'DELETE', url: `/api/user/${fellow.id}` }, 403],
      [json('POST', '/api/user/manage', { username: 'root', action: 'disable' }), 403],
      [json('POST', '/api/user/manage', { username: fellow.username, action: 'disable' }), 403],
      [json('POST', '/api/user/manage', { username: accounts.other.username, action: 'promote' }), 403],
      [json('POST', '/api/user/manage', { username: fellow.username, action: 'demote' }), 403],
      [json('POST', '/api/user', { username: unique('peer'), display_name: 'Peer', password: SECRETS.password, role: 10 }), 403],
    ];
    for (const [call, status] of cases)
      expect((await send(call, 'admin')).status, `${call.method} ${call.url} ${JSON.stringify(call.body)}`).toBe(status);
    expect((await t.ctx.usersRepo.byId(accounts.super.id))?.status).toBe(UserStatus.Enabled);
    expect((await t.ctx.usersRepo.byId(fellow.id))?.role).toBe(Role.Admin);
  });

  it('keeps users and admins to the connected apps they may manage', async () => {
    // A grant of the other user, made the way an Allow makes it.
    const grantId = await t.ctx.db
      .insertInto('oauth_server_grants')
      .values({
        user_id: accounts.other.id,
        client_id: 'tpc_matrix',
        client_name: 'Matrix',
        resource: `${base}/`,
        scope: '',
        created_at: Date.now(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(grantId.id);
    expect((await send({ method: 'DELETE', url: `/api/oauth-server/grants/${id}` }, 'user')).status).toBe(404);
    const listed = await send(get('/api/oauth-server/grants'), 'user');
    expect(listed.text).not.toContain('tpc_matrix');
    // An admin manages users of lower role only; the super admin everyone.
    expect((await send(get(`/api/oauth-server/users/${accounts.super.id}/grants`), 'admin')).status).toBe(403);
    expect((await send(get(`/api/oauth-server/users/${accounts.other.id}/grants`), 'admin')).text).toContain('tpc_matrix');
    expect((await send({ method: 'DELETE', url: `/api/oauth-server/users/${accounts.other.id}/grants/${id}` }, 'admin')).status).toBe(200);
    expect((await send(get(`/api/oauth-server/users/${accounts.other.id}/grants`), 'super')).text).not.toContain('tpc_matrix');
  });

  it('answers 404 to a session used with another user’s key, on both transports, and leaves it working', async () => {
    const mine = await apiKeyOf(accounts.user.id);
    const theirs = await apiKeyOf(accounts.other.id);
    const session = await mcpSession(mine);
    const headers = (key: string) => ({
      authorization: `Bearer ${key}`,
      accept: ACCEPT_BOTH,
      'content-type': 'application/json',
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
    });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect((await fetch(`${base}/proxy/matrix-stdio/mcp`, { method: 'POST', headers: headers(theirs), body: list })).status).toBe(404);
    expect((await fetch(`${base}/proxy/matrix-stdio/mcp`, { method: 'DELETE', headers: headers(theirs) })).status).toBe(404);
    const stillMine = await fetch(`${base}/proxy/matrix-stdio/mcp`, { method: 'POST', headers: headers(mine), body: list });
    expect(stillMine.status).toBe(200);
    expect(await stillMine.text()).toContain('"tools"');

    const legacy = await legacySession(mine);
    try {
      const post = (key: string) =>
        fetch(`${base}${legacy.endpoint}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: list,
        });
      expect((await post(theirs)).status).toBe(404);
      expect((await post(mine)).status).toBe(202);
    } finally {
      await legacy.close();
    }
  });

  it('keeps what a failing tool server prints about its secrets out of health details and logs', async () => {
    // The fixture writes MATRIX_TOKEN=<value> to stderr and exits at once: the check fails quoting it.
    const leaky = await services().insert(
      serviceRow({
        name: unique('leaky'),
        command: process.execPath,
        args_json: JSON.stringify([FIXTURE]),
        env_enc: t.ctx.secrets.encryptJson({ MATRIX_TOKEN: SECRETS.envSecret, FIXTURE_MODE: 'print-env=MATRIX_TOKEN,exit-after=0' }),
        env_schema_json: JSON.stringify([{ name: 'MATRIX_TOKEN', is_secret: true }]),
      }),
    );
    const check = await send(json('POST', `/api/mcp_services/${leaky.id}/health/check`, {}), 'user');
    expect(check.status).toBe(200);
    expect(check.text).toContain('unhealthy');
    await t.ctx.serviceLog.flush();
    const seen = [
      check,
      await send(get('/api/mcp_market/installed'), 'user'),
      await send(get(`/api/mcp_logs?page=1&page_size=100&service_id=${leaky.id}`), 'admin'),
    ];
    expect(seen[2]?.text).toContain('MATRIX_TOKEN=');
    for (const answer of seen) expect(answer.text).not.toContain(SECRETS.envSecret);
  });

  it('links a provider only to the caller: bind=1 needs the caller’s own valid token', async () => {
    expect((await send(get('/api/oauth/github/authorize?bind=1'), 'none')).status).toBe(401);
    expect((await send(get('/api/oauth/github/authorize?bind=1'), 'garbage')).status).toBe(401);
    expect((await send(get('/api/oauth/github/authorize?bind=1'), 'disabled')).status).toBe(401);
    expect((await send(get('/api/oauth/github/authorize?bind=1'), 'user')).status).toBe(200);
  });
});
