import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role } from '@toolport/contract';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppParts } from '../src/app.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type Engine, openDatabase } from '../src/db/db.js';
import { createLogger } from '../src/infra/logger.js';
import { Secrets, sha256 } from '../src/infra/secrets.js';
import { runRotateSecretCommand } from '../src/secrets-rotation/cli.js';
import { SEALED_COLUMNS } from '../src/secrets-rotation/rotate.js';
import { ACCEPT_BOTH, initializeBody } from './gateway/raw-http.js';
import { ADMIN_PASSWORD, bearer, createPgDatabase, engines } from './harness.js';
import { serviceRow } from './kits/services.js';

/**
 * Secrets at rest (docs/architecture.md §8): after values of every secret kind went in through the API and a
 * tool server ran with them, neither the raw SQLite file (and its WAL) nor any row of any PostgreSQL
 * table holds one of them in clear. API keys are kept as a SHA-256 hash plus an encrypted copy,
 * passwords as argon2id. Then `toolport rotate-secret` moves everything to a new SECRET_KEY: all of it
 * still reads back through the app started with the new key, the storage still holds no plaintext,
 * and nothing in it opens with the old key any more.
 */

const OLD_KEY = 'at-rest-old-key-0123456789-abcdefghijklmnopqrstuvwxyz';
const NEW_KEY = 'at-rest-new-key-9876543210-zyxwvutsrqponmlkjihgfedcba';
const FIXTURE = new URL('./fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;
/**
 * What `Secrets.encrypt` writes: `v1.<iv>.<tag>.<ciphertext>`. The ciphertext ends where the next sealed value
 * begins, too: SQLite stores a row's text columns side by side (provider_identities' two tokens).
 */
const SEALED_ANYWHERE = /v1\.[\w-]{16}\.[\w-]{22}\.[\w-]*?(?=v1\.[\w-]{16}\.|[^\w-]|$)/g;

const VALUES = {
  envSecret: 'at-rest-env-secret-c0ffee',
  envPlain: 'at-rest-env-plain-region-7',
  headerValue: 'at-rest-header-bearer-5e5e',
  personal: 'at-rest-personal-value-d00d',
  githubSecret: 'at-rest-github-client-secret-1a2b',
  googleSecret: 'at-rest-google-client-secret-3c4d',
  password: 'at-rest-user-password-9z8y',
  upstreamClientSecret: 'at-rest-upstream-client-secret-77aa',
  upstreamAccess: 'at-rest-upstream-access-token-88bb',
  upstreamRefresh: 'at-rest-upstream-refresh-token-99cc',
  upstreamVerifier: 'at-rest-upstream-code-verifier-00dd',
  providerRefresh: 'at-rest-sign-in-provider-refresh-00ee',
  providerAccess: 'at-rest-sign-in-provider-access-00ff',
};

interface Running {
  app: FastifyInstance;
  ctx: AppParts;
  close(): Promise<void>;
}

interface Place {
  dataDir: string;
  databaseUrl?: string;
}

const envOf = (place: Place, extra: Record<string, string>): Record<string, string> => ({
  DATA_DIR: place.dataDir,
  ADMIN_PASSWORD,
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  ...(place.databaseUrl ? { DATABASE_URL: place.databaseUrl } : {}),
  ...extra,
});

/** The real app on `place` with `key`, kept apart from the harness so its data outlives the app. */
async function boot(place: Place, key: string): Promise<Running> {
  const config = loadConfig(envOf(place, { SECRET_KEY: key }));
  const database = openDatabase(config);
  const built = await buildApp({ config, database, logger: createLogger(config.logLevel), print: () => undefined });
  await built.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app: built.app,
    ctx: built.ctx,
    async close() {
      await built.app.close();
      await database.db.destroy();
    },
  };
}

/** Everything stored, as text: the SQLite file and its WAL byte for byte, or every row of every PostgreSQL table. */
async function rawStorage(engine: Engine, place: Place): Promise<string> {
  if (engine === 'sqlite') {
    const file = path.join(place.dataDir, 'toolport.db');
    return ['', '-wal', '-journal']
      .map((suffix) => `${file}${suffix}`)
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'))
      .join('\n');
  }
  const client = new pg.Client({ connectionString: place.databaseUrl });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`,
    );
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['users', 'services', 'service_user_envs', 'options']));
    const parts: string[] = [];
    for (const { name } of tables) {
      const { rows } = await client.query<{ j: string }>(`select row_to_json(t)::text as j from "${name}" t`);
      parts.push(...rows.map((r) => r.j));
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}

const opens = (key: string, sealed: string): boolean => {
  try {
    new Secrets(key).decrypt(sealed);
    return true;
  } catch {
    return false;
  }
};

describe.each(engines)('secrets at rest on %s', (engine) => {
  const place: Place = { dataDir: mkdtempSync(path.join(tmpdir(), 'toolport-at-rest-')) };
  let dropPg: (() => Promise<void>) | undefined;
  let running: Running | undefined;
  const seeded = { apiKey: '', userId: 0, username: 'at-rest-user', stdioId: 0, remoteId: 0 };
  const plaintexts = () => ({ ...VALUES, apiKey: seeded.apiKey, rootPassword: ADMIN_PASSWORD, newKey: NEW_KEY, oldKey: OLD_KEY });

  const call = async (r: Running, method: string, url: string, token: string, body?: unknown) => {
    const res = await r.app.inject({
      method: method as 'GET',
      url,
      headers: bearer(token),
      ...(body === undefined ? {} : { payload: body as object }),
    });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json().data;
  };
  const login = async (r: Running, username: string, password: string) =>
    (await r.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } })).json().data.access_token as string;

  beforeAll(async () => {
    if (engine === 'postgres') {
      const db = await createPgDatabase();
      place.databaseUrl = db.url;
      dropPg = db.drop;
    }
    const r = await boot(place, OLD_KEY);
    running = r;
    const root = await login(r, 'root', ADMIN_PASSWORD);

    // A password user, its API key, and its own value for a service variable.
    const user = await call(r, 'POST', '/api/user', root, {
      username: seeded.username,
      display_name: 'At rest',
      password: VALUES.password,
      role: Role.User,
    });
    seeded.userId = user.id;
    const userToken = await login(r, seeded.username, VALUES.password);
    seeded.apiKey = (await call(r, 'GET', '/api/user/self', userToken)).token;
    expect(seeded.apiKey).toMatch(/^tpk_/);

    // OAuth client secrets in Preferences.
    for (const [key, value] of Object.entries({
      GitHubClientId: 'at-rest-github-id',
      GitHubClientSecret: VALUES.githubSecret,
      GoogleClientId: 'at-rest-google-id',
      GoogleClientSecret: VALUES.googleSecret,
    }))
      await call(r, 'PUT', '/api/option/', root, { key, value });

    // A stdio service declaring a secret and a plain variable; values set through the edit API.
    const services = r.ctx.services.rows;
    seeded.stdioId = (
      await services.insert(
        serviceRow({
          name: 'at-rest-stdio',
          command: process.execPath,
          args_json: JSON.stringify([FIXTURE]),
          env_schema_json: JSON.stringify([
            { name: 'AT_REST_TOKEN', is_secret: true },
            { name: 'AT_REST_REGION', is_secret: false },
          ]),
        }),
      )
    ).id;
    await call(r, 'PUT', `/api/mcp_services/${seeded.stdioId}`, root, {
      default_envs_json: JSON.stringify({ AT_REST_TOKEN: VALUES.envSecret, AT_REST_REGION: VALUES.envPlain }),
    });
    await call(r, 'PUT', `/api/mcp_services/${seeded.stdioId}/my_env`, userToken, { env: { AT_REST_TOKEN: VALUES.personal } });
    // A remote service with a secret header, created through the API.
    seeded.remoteId = (
      await call(r, 'POST', '/api/mcp_market/custom_service', root, {
        name: 'at-rest-remote',
        type: 'streamableHttp',
        url: 'http://127.0.0.1:9/mcp',
        headers: { Authorization: `Bearer ${VALUES.headerValue}` },
      })
    ).service_id;

    // The tool server runs with those values, for the user with their own value: logs and records are written.
    const address = r.app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    const proxy = `http://127.0.0.1:${address.port}/proxy/at-rest-stdio/mcp`;
    const post = (body: unknown, session?: string) =>
      fetch(proxy, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${seeded.apiKey}`,
          accept: ACCEPT_BOTH,
          'content-type': 'application/json',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post(initializeBody());
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get('mcp-session-id') as string;
    const echo = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' } } },
      session,
    );
    expect(await echo.text()).toContain('hello');
    await call(r, 'POST', `/api/mcp_services/${seeded.stdioId}/health/check`, userToken, {});
    await call(r, 'POST', `/api/mcp_services/${seeded.remoteId}/health/check`, userToken, {});
    // An upstream OAuth connection of the remote service, sealed as modules/upstream-authorization seals it (its flow
    // against a real provider is tested in test/gateway/upstream-authorization.test.ts): client secret, tokens, and an
    // authorization in progress.
    const { db, secrets } = r.ctx;
    const now = Date.now();
    await db
      .insertInto('upstream_oauth_services')
      .values({ service_id: seeded.remoteId, client_secret_enc: secrets.encrypt(VALUES.upstreamClientSecret), updated_at: now })
      .execute();
    await db
      .insertInto('upstream_oauth_tokens')
      .values({
        service_id: seeded.remoteId,
        owner_id: 0,
        user_id: null,
        access_token_enc: secrets.encrypt(VALUES.upstreamAccess),
        refresh_token_enc: secrets.encrypt(VALUES.upstreamRefresh),
        expires_at: now + 3_600_000,
        connected_by: seeded.userId,
        updated_at: now,
      })
      .execute();
    await db
      .insertInto('upstream_oauth_states')
      .values({
        state_hash: 'at-rest-state-hash',
        service_id: seeded.remoteId,
        user_id: seeded.userId,
        owner_id: 0,
        code_verifier_enc: secrets.encrypt(VALUES.upstreamVerifier),
        redirect_uri: 'http://127.0.0.1/api/upstream_oauth/callback',
        created_at: now,
        expires_at: now + 600_000,
      })
      .execute();
    // An OpenID Connect identity with the provider's tokens, kept for deprovisioning at refresh (decision 0063).
    await db
      .insertInto('provider_identities')
      .values({
        user_id: seeded.userId,
        provider: 'oidc:corp',
        provider_user_id: 'at-rest-sub',
        email: '',
        created_at: now,
        refresh_token_enc: secrets.encrypt(VALUES.providerRefresh),
        access_token_enc: secrets.encrypt(VALUES.providerAccess),
      })
      .execute();
    await r.close();
    running = undefined;
  });

  afterAll(async () => {
    await running?.close();
    await dropPg?.();
    rmSync(place.dataDir, { recursive: true, force: true });
  });

  const expectNoPlaintext = (raw: string) => {
    const found = Object.entries(plaintexts())
      .filter(([, value]) => raw.includes(value))
      .map(([name]) => name);
    expect(found, 'values stored in clear').toEqual([]);
  };

  it('stores no secret in clear: API keys as a SHA-256 hash and an encrypted copy, passwords as argon2id', async () => {
    const raw = await rawStorage(engine, place);
    expect(raw.length).toBeGreaterThan(1000);
    expectNoPlaintext(raw);
    expect(raw).toContain(sha256(seeded.apiKey));
    // Every sealed value in storage opens with the key in use; the user's API key copy is among them.
    const sealed = raw.match(SEALED_ANYWHERE) ?? [];
    expect(sealed.length).toBeGreaterThanOrEqual(SEALED_COLUMNS.length);
    const opened = sealed.filter((s) => opens(OLD_KEY, s)).map((s) => new Secrets(OLD_KEY).decrypt(s));
    expect(opened).toContain(seeded.apiKey);
    expect(opened.some((v) => v.includes(VALUES.personal))).toBe(true);
    expect(opened).toContain(VALUES.githubSecret);
    const handle = openDatabase({ dataDir: place.dataDir, databaseUrl: place.databaseUrl });
    try {
      const hashes = await handle.db.selectFrom('users').select(['username', 'password_hash', 'api_key_hash']).execute();
      for (const row of hashes) expect(row.password_hash ?? '$argon2id$', row.username).toMatch(/^\$argon2id\$/);
      expect(hashes.find((u) => u.username === seeded.username)?.api_key_hash).toBe(sha256(seeded.apiKey));
    } finally {
      await handle.db.destroy();
    }
  });

  it('moves everything to a new key with rotate-secret: all still reads back, nothing opens with the old key', async () => {
    const lines: string[] = [];
    await runRotateSecretCommand([], { env: envOf(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: NEW_KEY }), print: (l) => lines.push(l) });
    expect(lines.join('\n')).toContain('Re-encrypted with the new key');
    expect(lines.join('\n')).not.toContain(NEW_KEY);

    const raw = await rawStorage(engine, place);
    expectNoPlaintext(raw);
    const sealed = [...new Set(raw.match(SEALED_ANYWHERE) ?? [])];
    expect(sealed.length).toBeGreaterThanOrEqual(SEALED_COLUMNS.length);
    expect(
      sealed.filter((s) => opens(OLD_KEY, s)),
      'values that still open with the old key',
    ).toEqual([]);

    // The app started with the new key reads every value back.
    const r = await boot(place, NEW_KEY);
    running = r;
    const root = await login(r, 'root', ADMIN_PASSWORD);
    const userToken = await login(r, seeded.username, VALUES.password);
    expect((await call(r, 'GET', '/api/user/self', userToken)).token).toBe(seeded.apiKey);
    expect((await r.ctx.catalog.userByApiKey(seeded.apiKey))?.id).toBe(seeded.userId);
    const exported = (await call(r, 'GET', '/api/mcp_market/export?include_secrets=true', root)).mcpServers;
    expect(exported['at-rest-stdio'].env).toEqual({ AT_REST_TOKEN: VALUES.envSecret, AT_REST_REGION: VALUES.envPlain });
    expect(exported['at-rest-remote'].headers).toEqual({ Authorization: `Bearer ${VALUES.headerValue}` });
    expect(await r.ctx.catalog.userEnv(seeded.stdioId, seeded.userId)).toEqual({ AT_REST_TOKEN: VALUES.personal });
    expect(r.ctx.options.get('GitHubClientSecret')).toBe(VALUES.githubSecret);
    expect(r.ctx.options.get('GoogleClientSecret')).toBe(VALUES.googleSecret);
    await r.close();
    running = undefined;
  });
});
