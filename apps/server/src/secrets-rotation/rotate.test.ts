import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltCli, exitOf, runCli } from '../../test/built-cli.js';
import { type FakeOAuth, startFakeOAuth } from '../../test/fake-oauth.js';
import { openSession, post } from '../../test/gateway/raw-http.js';
import { bearer, createPgDatabase, createTestApp, type TestApp } from '../../test/harness.js';
import { callToolThroughGateway, FIXTURE_SERVER, firstText } from '../../test/kits/install.js';
import { finishSignIn, type Started, startSignIn, visitProvider } from '../../test/kits/oauth.js';
import { CliCommandError, CliUsageError } from '../cli/args.js';
import { type Db, type Engine, openDatabase } from '../db/db.js';
import { Secrets } from '../infra/secrets.js';
import { runRotateSecretCommand } from './cli.js';
import { type RotationHooks, SEALED_COLUMNS } from './rotate.js';

/**
 * `toolport rotate-secret` against real databases: values of every encrypted kind are stored through
 * the API under one key, the command re-encrypts them with the servers stopped, and an app started
 * with the new key reads every one of them back through the API.
 */
const OLD_KEY = 'old-rotation-key-0123456789-abcdefghijklmnopqrstuvwxyz';
const NEW_KEY = 'new-rotation-key-9876543210-zyxwvutsrqponmlkjihgfedcba';
const SEALED = /^v1\.[\w-]+\.[\w-]+\.[\w-]*$/;

interface Place {
  dataDir: string;
  databaseUrl?: string;
}

const envOf = (place: Place, extra: Record<string, string> = {}): Record<string, string> => ({
  LOG_LEVEL: 'silent',
  DATA_DIR: place.dataDir,
  ...(place.databaseUrl ? { DATABASE_URL: place.databaseUrl } : {}),
  ...extra,
});

async function rotate(place: Place, keys: Record<string, string>, extra: { hooks?: RotationHooks } = {}) {
  const lines: string[] = [];
  await runRotateSecretCommand([], { env: envOf(place, keys), print: (l) => lines.push(l), ...extra });
  return lines;
}

/** A short-lived connection: one left open would be a "running server" to the command. */
async function withDb<T>(place: Place, work: (db: Db) => Promise<T>): Promise<T> {
  const handle = openDatabase(place);
  try {
    return await work(handle.db);
  } finally {
    await handle.db.destroy();
  }
}

/** Every value of every encrypted column, by place. */
const sealedValues = (place: Place) =>
  withDb(place, async (db) => {
    const out: Record<string, string> = {};
    for (const c of SEALED_COLUMNS) {
      const keys = sql.join(c.keys.map((k) => sql.ref(k)));
      const only = c.only ? sql` and ${c.only()}` : sql``;
      const { rows } = await sql<
        Record<string, unknown> & { v: string }
      >`select ${keys}, ${sql.ref(c.column)} as v from ${sql.table(c.table)}
        where ${sql.ref(c.column)} <> ''${only}`.execute(db);
      for (const row of rows) out[`${c.table}.${c.column}:${c.keys.map((k) => row[k]).join('/')}`] = row.v;
    }
    return out;
  });

/** Every text column of every table holding a value shaped like `Secrets.encrypt` output: none may be missed. */
const columnsWithSealedValues = (place: Place, engine: Engine) =>
  withDb(place, async (db) => {
    const columns: { t: string; c: string }[] =
      engine === 'sqlite'
        ? (
            await sql<{ t: string; c: string; type: string }>`select m.name as t, p.name as c, p.type as type
              from sqlite_master m join pragma_table_info(m.name) p where m.type = 'table'`.execute(db)
          ).rows.filter((r) => /text|char/i.test(r.type))
        : (
            await sql<{ t: string; c: string }>`select table_name as t, column_name as c from information_schema.columns
              where table_schema = 'public' and data_type in ('text', 'character varying')`.execute(db)
          ).rows;
    const found = new Set<string>();
    for (const { t, c } of columns) {
      const { rows } = await sql<{ v: string }>`select ${sql.ref(c)} as v from ${sql.table(t)} where ${sql.ref(c)} like 'v1.%'`.execute(db);
      if (rows.some((r) => SEALED.test(r.v))) found.add(`${t}.${c}`);
    }
    return [...found].sort();
  });

const decryptsWith = (key: string, sealed: string) => {
  try {
    new Secrets(key).decrypt(sealed);
    return true;
  } catch {
    return false;
  }
};

describe.each<Engine>(['sqlite', 'postgres'])('toolport rotate-secret on %s', (engine) => {
  let fake: FakeOAuth;
  let place: Place;
  let dropPg: (() => Promise<void>) | undefined;
  let t: TestApp | undefined;
  let started: Started;
  let before: Record<string, string>;
  const seen: {
    rootRefresh?: string;
    rootAccess?: string;
    username?: string;
    userApiKey?: string;
    sessionId?: string;
    stdioId?: number;
    adminView?: unknown;
  } = {};

  const startApp = async (key: string) => {
    const app = await createTestApp(engine, { ...fake.env, ...envOf(place), SECRET_KEY: key });
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    return app;
  };
  const installed = async (app: TestApp, token: string) => {
    const res = await app.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    const list = res.json().data as { name: string; default_envs_json: string; headers_json: string }[];
    return Object.fromEntries(list.map((s) => [s.name, { env: JSON.parse(s.default_envs_json), headers: JSON.parse(s.headers_json) }]));
  };

  beforeAll(async () => {
    fake = await startFakeOAuth();
    place = { dataDir: mkdtempSync(path.join(tmpdir(), 'toolport-rotate-')) };
    if (engine === 'postgres') {
      const pg = await createPgDatabase();
      place.databaseUrl = pg.url;
      dropPg = pg.drop;
    }
    const app = await startApp(OLD_KEY);
    t = app;
    const root = await app.rootToken();
    const admin = bearer(root);
    // OAuth client secrets, through Preferences.
    for (const [key, value] of [
      ['GitHubClientId', fake.clients.github.clientId],
      ['GitHubClientSecret', fake.clients.github.clientSecret],
      ['GitHubOAuthEnabled', 'true'],
      ['GoogleClientSecret', 'google-secret-kept-across-rotation'],
    ]) {
      const res = await app.app.inject({ method: 'PUT', url: '/api/option/', headers: admin, payload: { key, value } });
      expect(res.statusCode, res.body).toBe(200);
    }
    // Service variables and headers, through custom services.
    const stdio = await app.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: admin,
      payload: {
        name: 'rot-stdio',
        type: 'stdio',
        command: `"${process.execPath}" "${FIXTURE_SERVER}"`,
        environments: 'API_TOKEN=stdio-secret-1',
      },
    });
    expect(stdio.statusCode, stdio.body).toBe(201);
    seen.stdioId = stdio.json().data.service_id;
    const remote = await app.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: admin,
      payload: {
        name: 'rot-remote',
        type: 'streamableHttp',
        url: 'http://127.0.0.1:9/mcp',
        headers: 'Authorization=Bearer remote-secret-2',
      },
    });
    expect(remote.statusCode, remote.body).toBe(201);
    // An upstream OAuth connection (migration 0007): client secret, tokens and an authorization in progress.
    const remoteId = remote.json().data.service_id as number;
    const sealedBy = app.ctx.secrets;
    const at = Date.now();
    await app.ctx.db
      .insertInto('upstream_oauth_services')
      .values({ service_id: remoteId, client_id: 'c', client_secret_enc: sealedBy.encrypt('upstream-client-secret'), updated_at: at })
      .execute();
    await app.ctx.db
      .insertInto('upstream_oauth_tokens')
      .values({
        service_id: remoteId,
        owner_id: 0,
        access_token_enc: sealedBy.encrypt('upstream-access'),
        refresh_token_enc: sealedBy.encrypt('upstream-refresh'),
        expires_at: null,
        connected_by: 1,
        updated_at: at,
      })
      .execute();
    await app.ctx.db
      .insertInto('upstream_oauth_states')
      .values({
        state_hash: 'f'.repeat(64),
        service_id: remoteId,
        user_id: 1,
        owner_id: 0,
        code_verifier_enc: sealedBy.encrypt('upstream-verifier'),
        redirect_uri: 'http://127.0.0.1/api/upstream_oauth/callback',
        created_at: at,
        expires_at: at + 600_000,
      })
      .execute();
    // A user (and so an API key) with personal values.
    const user = await app.createUser();
    seen.username = user.username;
    const mine = await app.app.inject({
      method: 'PUT',
      url: `/api/mcp_services/${seen.stdioId}/my_env`,
      headers: bearer(user.token),
      payload: { env: { API_TOKEN: 'personal-secret-3' } },
    });
    expect(mine.statusCode, mine.body).toBe(200);
    seen.userApiKey = (await app.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(user.token) })).json().data.token;
    // An OpenID Connect identity with the provider's tokens, kept for deprovisioning at refresh (migration 0014).
    await app.ctx.db
      .insertInto('provider_identities')
      .values({
        user_id: user.id,
        provider: 'oidc:corp',
        provider_user_id: 'rot-sub',
        email: '',
        created_at: at,
        refresh_token_enc: sealedBy.encrypt('provider-refresh'),
        access_token_enc: sealedBy.encrypt('provider-access'),
      })
      .execute();
    // A GitHub sign-in in progress: its PKCE verifier is stored encrypted.
    started = await startSignIn(app, 'github');
    // What a signed-in console and a connected MCP client hold.
    const login = await app.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: 'root-password-for-tests' },
    });
    seen.rootAccess = login.json().data.access_token;
    seen.rootRefresh = login.json().data.refresh_token;
    const address = app.app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    seen.sessionId = await openSession(`http://127.0.0.1:${address.port}/proxy/rot-stdio/mcp`, seen.userApiKey as string);
    seen.adminView = await installed(app, root);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await dropPg?.();
    if (place) rmSync(place.dataDir, { recursive: true, force: true });
  });

  it('stores values of every encrypted kind, and no encrypted column is missing from the rotation', async () => {
    // The servers are stopped before a rotation.
    await t?.close();
    t = undefined;
    const expected = [...new Set(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`))].sort();
    expect(await columnsWithSealedValues(place, engine)).toEqual(expected);
    before = await sealedValues(place);
    expect(Object.values(before).every((v) => decryptsWith(OLD_KEY, v))).toBe(true);
  });

  it('refuses while a server uses the database, and changes nothing', async () => {
    const running = await startApp(OLD_KEY);
    try {
      const attempt = rotate(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: NEW_KEY });
      await expect(attempt).rejects.toBeInstanceOf(CliCommandError);
      await expect(attempt).rejects.toThrow(
        engine === 'sqlite' ? /is using .*toolport\.db: stop it/ : /other connections to .* stop every Toolport replica/,
      );
    } finally {
      await running.close();
    }
    expect(await sealedValues(place)).toEqual(before);
  });

  it('refuses a current key that does not decrypt the database, and a missing or unusable new key', async () => {
    await expect(rotate(place, { SECRET_KEY: 'x'.repeat(40), NEW_SECRET_KEY: NEW_KEY })).rejects.toThrow(
      'the current key does not decrypt the stored values: it is not the key this database was encrypted with',
    );
    await expect(rotate(place, { SECRET_KEY: OLD_KEY })).rejects.toThrow(
      /SECRET_KEY is set, so the new key must be given too: .*NEW_SECRET_KEY/,
    );
    await expect(rotate(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: 'short' })).rejects.toThrow(
      'NEW_SECRET_KEY: must be at least 32 characters',
    );
    await expect(rotate(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: OLD_KEY })).rejects.toThrow('NEW_SECRET_KEY is the current key');
    await expect(runRotateSecretCommand(['extra'], { env: envOf(place, { SECRET_KEY: OLD_KEY }) })).rejects.toBeInstanceOf(CliUsageError);
    // A database of another version: a newer one may have encrypted columns this one does not know.
    await withDb(place, (db) => sql`insert into kysely_migration (name, timestamp) values ('9999_future', '2030-01-01')`.execute(db));
    try {
      await expect(rotate(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: NEW_KEY })).rejects.toThrow(
        'the database was migrated by a newer Toolport (9999_future): use that version',
      );
    } finally {
      await withDb(place, (db) => sql`delete from kysely_migration where name = '9999_future'`.execute(db));
    }
    expect(await sealedValues(place)).toEqual(before);
  });

  it('leaves every value as it was when the work fails in the middle or the check after it fails', async () => {
    const keys = { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: NEW_KEY };
    await expect(
      rotate(place, keys, {
        hooks: {
          afterReencrypt: async () => {
            throw new Error('disk full (made by the test)');
          },
        },
      }),
    ).rejects.toThrow('rotation failed, nothing was changed: disk full (made by the test)');
    expect(await sealedValues(place)).toEqual(before);

    // A value written wrongly in the transaction is caught by the check before the commit.
    await expect(
      rotate(place, keys, {
        hooks: {
          afterReencrypt: async (conn) => {
            await sql`update users set api_key_enc = ${new Secrets(OLD_KEY).encrypt('tampered')} where username = 'root'`.execute(conn);
          },
        },
      }),
    ).rejects.toThrow(/^the check after re-encrypting failed at users\.api_key_enc \(id \d+\): nothing was changed$/);
    expect(await sealedValues(place)).toEqual(before);
  });

  it('re-encrypts every value with the new key in one go and prints neither key', async () => {
    const lines = await rotate(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: NEW_KEY });
    const text = lines.join('\n');
    expect(lines[0]).toMatch(
      /^Re-encrypted with the new key in .*: 2 API key copies, 2 service variable sets, 2 service header sets, 1 personal variable set, 2 OAuth client secrets, 1 sign-in in progress, 1 sign-in provider refresh token, 1 sign-in provider access token, 1 upstream OAuth client secret, 1 upstream OAuth access token, 1 upstream OAuth refresh token, 1 upstream OAuth authorization in progress\.$/,
    );
    expect(text).toContain('Now set SECRET_KEY to the value of NEW_SECRET_KEY');
    expect(text).toContain('gateway session ids (MCP clients reconnect and initialise a new session)');
    expect(text).not.toContain(OLD_KEY);
    expect(text).not.toContain(NEW_KEY);

    const after = await sealedValues(place);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const [where, sealed] of Object.entries(after)) {
      expect(sealed, where).not.toBe(before[where]);
      expect(decryptsWith(NEW_KEY, sealed), where).toBe(true);
      expect(decryptsWith(OLD_KEY, sealed), where).toBe(false);
      expect(new Secrets(NEW_KEY).decrypt(sealed), where).toBe(new Secrets(OLD_KEY).decrypt(before[where] as string));
    }
    // Running the same command again finds nothing to do; the old key no longer opens anything.
    await expect(rotate(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: NEW_KEY })).rejects.toThrow(
      'every stored value is already encrypted with the new key: nothing to rotate',
    );
    await expect(rotate(place, { SECRET_KEY: OLD_KEY, NEW_SECRET_KEY: 'y'.repeat(40) })).rejects.toThrow(
      'the current key does not decrypt the stored values',
    );
    expect(await sealedValues(place)).toEqual(after);
  });

  it('an app started with the new key reads every value back through the API', async () => {
    const app = await startApp(NEW_KEY);
    t = app;
    // Signed with the old key: the access token and the gateway session id are refused; the refresh token is a hash and still works.
    expect((await app.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(seen.rootAccess as string) })).statusCode).toBe(
      401,
    );
    const refreshed = await app.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: seen.rootRefresh } });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const root = refreshed.json().data.access_token as string;
    const address = app.app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    const stale = await post(
      `http://127.0.0.1:${address.port}/proxy/rot-stdio/mcp`,
      seen.userApiKey,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': seen.sessionId as string },
    );
    expect(stale.status).toBe(404);

    const userToken = await app.login(seen.username as string, 'password-1234');

    // Variable and header values: in clear for the admin, masked for the user.
    expect(await installed(app, root)).toEqual(seen.adminView);
    expect((await installed(app, root))['rot-stdio']).toEqual({ env: { API_TOKEN: 'stdio-secret-1' }, headers: {} });
    expect((await installed(app, root))['rot-remote']?.headers).toEqual({ Authorization: 'Bearer remote-secret-2' });
    const asUser = await installed(app, userToken);
    expect(asUser['rot-stdio']?.env).toEqual({ API_TOKEN: '********' });
    expect(asUser['rot-remote']?.headers).toEqual({ Authorization: '********' });

    // The user's API key is shown again, works at the gateway, and the service starts with its values.
    const self = await app.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(userToken) });
    expect(self.json().data.token).toBe(seen.userApiKey);
    const result = await callToolThroughGateway(app, userToken, 'rot-stdio', 'echo', { text: 'after rotation' });
    expect(firstText(result)).toBe('echo: after rotation');
    const myEnv = await app.app.inject({
      method: 'GET',
      url: `/api/mcp_services/${seen.stdioId}/my_env`,
      headers: bearer(userToken),
    });
    expect(myEnv.json().data.env).toEqual({ API_TOKEN: '********' });
    const personal = await app.ctx.db
      .selectFrom('service_user_envs')
      .select('env_enc')
      .where('service_id', '=', seen.stdioId as number)
      .executeTakeFirstOrThrow();
    expect(app.ctx.secrets.decryptJson(personal.env_enc, {})).toEqual({ API_TOKEN: 'personal-secret-3' });

    // Preferences show the secrets as set, and the GitHub sign-in begun before the rotation completes:
    // the provider checks the client secret and the PKCE verifier.
    const options = (await app.app.inject({ method: 'GET', url: '/api/option/', headers: bearer(root) })).json().data as {
      key: string;
      value: string;
    }[];
    expect(options.find((o) => o.key === 'GitHubClientSecret')?.value).toBe('********');
    expect(app.ctx.options.get('GoogleClientSecret')).toBe('google-secret-kept-across-rotation');
    const params = await visitProvider(started.url);
    const signedIn = await finishSignIn(app, 'github', params, { cookie: started.cookie });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.json().data.access_token).toEqual(expect.any(String));
  }, 60_000);
});

describe('toolport rotate-secret with the generated DATA_DIR/secret.key (SQLite)', () => {
  let work: string;
  let place: Place;
  const keyFile = () => path.join(place.dataDir, 'secret.key');

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'toolport-rotate-file-'));
    place = { dataDir: path.join(work, 'data') };
    mkdirSync(place.dataDir);
    // No SECRET_KEY: the app generates DATA_DIR/secret.key.
    const app = await createTestApp('sqlite', { DATA_DIR: place.dataDir, SECRET_KEY: '' });
    const root = await app.rootToken();
    const res = await app.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: bearer(root),
      payload: { name: 'kept', type: 'streamableHttp', url: 'http://127.0.0.1:9/mcp', headers: 'X-Api-Key=file-key-secret' },
    });
    expect(res.statusCode, res.body).toBe(201);
    await app.close();
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const headersThroughApi = async () => {
    const app = await createTestApp('sqlite', { DATA_DIR: place.dataDir, SECRET_KEY: '' });
    try {
      const res = await app.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: bearer(await app.rootToken()) });
      return JSON.parse(res.json().data.find((s: { name: string }) => s.name === 'kept').headers_json);
    } finally {
      await app.close();
    }
  };

  it('generates a new key into the file (mode 600), re-encrypts under it, and the app reads the values with it', async () => {
    const old = readFileSync(keyFile(), 'utf8').trim();
    const lines = await rotate(place, {});
    const fresh = readFileSync(keyFile(), 'utf8').trim();
    expect(fresh).not.toBe(old);
    expect(fresh.length).toBeGreaterThanOrEqual(32);
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
    expect(lines[1]).toBe(`The new key was generated into ${keyFile()} (mode 600).`);
    expect(lines.join('\n')).not.toContain(old);
    expect(lines.join('\n')).not.toContain(fresh);
    expect(readdirSync(place.dataDir).filter((f) => f.includes('.rotate-'))).toEqual([]);
    expect(await headersThroughApi()).toEqual({ 'X-Api-Key': 'file-key-secret' });
  });

  it('writes a key given in NEW_SECRET_KEY to the file, and keeps the old file when the rotation fails', async () => {
    const old = readFileSync(keyFile(), 'utf8');
    await expect(
      rotate(
        place,
        { NEW_SECRET_KEY: NEW_KEY },
        {
          hooks: {
            afterReencrypt: async () => {
              throw new Error('interrupted');
            },
          },
        },
      ),
    ).rejects.toThrow('rotation failed, nothing was changed: interrupted');
    expect(readFileSync(keyFile(), 'utf8')).toBe(old);
    expect(readdirSync(place.dataDir).filter((f) => f.includes('.rotate-'))).toEqual([]);

    const lines = await rotate(place, { NEW_SECRET_KEY: NEW_KEY });
    expect(lines[1]).toBe(`The new key from NEW_SECRET_KEY was written to ${keyFile()} (mode 600).`);
    expect(readFileSync(keyFile(), 'utf8')).toBe(`${NEW_KEY}\n`);
    expect(await headersThroughApi()).toEqual({ 'X-Api-Key': 'file-key-secret' });
  });

  // Three runs of the built CLI, each a Node start: 30 s ran out once on a loaded machine.
  it('runs as `toolport rotate-secret` from the built CLI: exit 0, and 2 for a malformed command', { timeout: 120_000 }, async () => {
    await ensureBuiltCli();
    const before = readFileSync(keyFile(), 'utf8');
    const ok = runCli(['rotate-secret'], { DATA_DIR: place.dataDir });
    expect(await exitOf(ok), ok.stderr()).toBe(0);
    expect(ok.stdout()).toContain('Re-encrypted with the new key in');
    expect(readFileSync(keyFile(), 'utf8')).not.toBe(before);
    expect(ok.stdout()).not.toContain(readFileSync(keyFile(), 'utf8').trim());

    const bad = runCli(['rotate-secret', '--no-such-flag'], { DATA_DIR: place.dataDir });
    expect(await exitOf(bad)).toBe(2);
    const missing = runCli(['rotate-secret'], { DATA_DIR: path.join(work, 'empty') });
    expect(await exitOf(missing)).toBe(1);
    expect(missing.stderr()).toContain('there is no key to rotate');
    expect(existsSync(path.join(work, 'empty', 'toolport.db'))).toBe(false);
    expect(await headersThroughApi()).toEqual({ 'X-Api-Key': 'file-key-secret' });
  });
});
