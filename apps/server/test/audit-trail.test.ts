import { type AuditEntry, Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../src/infra/secrets.js';
import { auditedRoutes } from '../src/modules/audit/index.js';
import { ADMIN_PASSWORD, bearer, createTestApp, engines, type TestApp } from './harness.js';
import { serviceRow, suiteUser } from './kits/services.js';
import { apiRoutes, routeKey } from './route-table.js';

/**
 * The audit trail (decision 0049, docs/security.md "Audit trail"): every administrative endpoint the app
 * registered (every /api route for admins with a method other than GET, found by walking the app's routes,
 * not a list kept here) has an audit mapping and leaves exactly one entry per call, and no entry carries a
 * secret planted in a request.
 */

const tag = randomToken(6).replace(/[^A-Za-z0-9]/g, 'x');
/** Every planted secret starts with this: an entry containing it leaked one. */
const PLANTED = `audit-secret-${tag}`;
const secret = (where: string) => `${PLANTED}-${where}`;

const FIXTURE = new URL('./fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  payload?: unknown;
}

describe.each(engines)('audit trail on %s', (engine) => {
  let t: TestApp;
  let root: Record<string, string>;
  let rootId: number;
  let stdioId: number;
  let remoteId: number;
  let groupId: number;
  let counter = 0;
  const unique = (prefix: string) =>
    `${prefix}-${engine}-${++counter}-${randomToken(3)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, 'x')}`;

  const newestId = async (): Promise<number> =>
    Number(
      (
        await t.ctx.db
          .selectFrom('audit_entries')
          .select((eb) => eb.fn.max('id').as('id'))
          .executeTakeFirst()
      )?.id ?? 0,
    );
  const entriesAfter = async (id: number): Promise<AuditEntry[]> => {
    const rows = await t.ctx.db.selectFrom('audit_entries').selectAll().where('id', '>', id).orderBy('id').execute();
    const page = await t.app.inject({ method: 'GET', url: `/api/audit?page_size=100&since=0`, headers: root });
    expect(page.statusCode, page.body).toBe(200);
    const byId = new Map((page.json().data.entries as AuditEntry[]).map((e) => [e.id, e]));
    return rows.map((r) => byId.get(Number(r.id)) as AuditEntry);
  };
  const victim = async () => {
    const u = await suiteUser(t);
    const row = await t.ctx.usersRepo.byId(u.id);
    return { id: u.id, username: row?.username as string };
  };

  /** A call of each administrative route, with secrets planted where requests carry them. */
  const calls: Record<string, () => Promise<Call> | Call> = {
    'POST /api/user': () => ({
      method: 'POST',
      url: '/api/user',
      payload: { username: unique('made').slice(0, 30), display_name: 'Made', password: secret('new-user-password') },
    }),
    'PUT /api/user': async () => ({
      method: 'PUT',
      url: '/api/user',
      payload: { id: (await victim()).id, display_name: 'Edited', password: secret('edited-password') },
    }),
    'DELETE /api/user/:id': async () => ({ method: 'DELETE', url: `/api/user/${(await victim()).id}` }),
    'POST /api/user/manage': async () => ({
      method: 'POST',
      url: '/api/user/manage',
      payload: { username: (await victim()).username, action: 'promote' },
    }),
    // Provider identities an admin links and unlinks (decision 0063); an unknown id is recorded as a failed attempt.
    'POST /api/user/:id/identities': async () => ({
      method: 'POST',
      url: `/api/user/${(await victim()).id}/identities`,
      payload: { provider: 'github', subject: unique('gh') },
    }),
    'DELETE /api/user/:id/identities/:identityId': async () => ({
      method: 'DELETE',
      url: `/api/user/${(await victim()).id}/identities/999999`,
    }),
    'DELETE /api/user/held_identities/:id': () => ({ method: 'DELETE', url: '/api/user/held_identities/999999' }),
    'PUT /api/option/': () => ({ method: 'PUT', url: '/api/option/', payload: { key: 'GitHubClientSecret', value: secret('option') } }),
    'POST /api/option/embeddings/check': () => ({ method: 'POST', url: '/api/option/embeddings/check', payload: {} }),
    'POST /api/mcp_market/custom_service': () => ({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      payload: {
        name: unique('custom'),
        type: 'streamableHttp',
        url: `http://127.0.0.1:9/mcp?api_key=${secret('url-query')}`,
        headers: { Authorization: `Bearer ${secret('header-bearer')}`, 'X-Api-Key': secret('header') },
      },
    }),
    'PUT /api/mcp_services/:id': () => ({
      method: 'PUT',
      url: `/api/mcp_services/${remoteId}`,
      payload: {
        rpd_limit: 5,
        command: `https://user:${secret('url-password')}@127.0.0.1:9/mcp?token=${secret('url-token')}`,
        headers_json: JSON.stringify({ 'X-Matrix-Key': secret('headers-json') }),
        default_envs_json: { API_TOKEN: secret('default-env') },
      },
    }),
    'POST /api/mcp_services/:id/reconnect': () => ({ method: 'POST', url: `/api/mcp_services/${remoteId}/reconnect`, payload: {} }),
    'POST /api/mcp_market/uninstall': async () => {
      const row = await t.ctx.services.rows.insert(
        serviceRow({ name: unique('gone'), type: 'streamableHttp', command: 'http://127.0.0.1:9/mcp' }),
      );
      return { method: 'POST', url: '/api/mcp_market/uninstall', payload: { service_id: row.id } };
    },
    // Not a package: answered 400, and recorded as a failed attempt all the same.
    'POST /api/mcp_services/:id/update_package': () => ({
      method: 'POST',
      url: `/api/mcp_services/${remoteId}/update_package`,
      payload: {},
    }),
    'PUT /api/mcp_services/:id/tools/:original_name': () => ({
      method: 'PUT',
      url: `/api/mcp_services/${stdioId}/tools/echo`,
      payload: { description: 'Echoes' },
    }),
    'PUT /api/mcp_services/:id/oauth': async () => {
      const row = await t.ctx.services.rows.insert(
        serviceRow({ name: unique('oauth'), type: 'streamableHttp', command: 'http://127.0.0.1:9/mcp' }),
      );
      return {
        method: 'PUT',
        url: `/api/mcp_services/${row.id}/oauth`,
        payload: { oauth_mode: 'shared', client_id: 'audit-client', client_secret: secret('client-secret') },
      };
    },
    'POST /api/groups': () => ({ method: 'POST', url: '/api/groups', payload: { name: unique('g'), members: [{ service_id: stdioId }] } }),
    'PUT /api/groups/:id': () => ({
      method: 'PUT',
      url: `/api/groups/${groupId}`,
      payload: { name: 'audit-group', members: [{ service_id: stdioId }], access: { restricted: true, user_ids: [rootId] } },
    }),
    'DELETE /api/groups/:id': async () => {
      const made = await t.app.inject({
        method: 'POST',
        url: '/api/groups',
        headers: root,
        payload: { name: unique('gone'), members: [{ service_id: stdioId }] },
      });
      return { method: 'DELETE', url: `/api/groups/${made.json().data.id}` };
    },
    'DELETE /api/oauth-server/users/:userId/grants/:id': () => ({
      method: 'DELETE',
      url: `/api/oauth-server/users/${rootId}/grants/999999`,
    }),
    'POST /api/mcp_market/install_or_add_service': () => ({
      method: 'POST',
      url: '/api/mcp_market/install_or_add_service',
      payload: {
        source_type: 'custom',
        package_name: '@audit/tool',
        package_manager: 'npm',
        user_provided_env_vars: { AUDIT_TOKEN: secret('install-env') },
      },
    }),
    // An import document sent as text, as the console's file picker does: its secrets are found inside.
    'POST /api/mcp_market/batch-import': () => ({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      payload: JSON.stringify(
        JSON.stringify({
          mcpServers: {
            [unique('imported')]: {
              command: 'npx',
              args: ['-y', 'some-server', '--api-key', secret('arg'), `--token=${secret('arg-eq')}`],
              env: { SOME_TOKEN: secret('import-env') },
            },
            [unique('imported-remote')]: {
              type: 'http',
              url: `https://127.0.0.1:9/mcp?key=${secret('import-url')}`,
              headers: { Authorization: `Bearer ${secret('import-header')}` },
            },
          },
        }),
      ),
    }),
  };

  beforeAll(async () => {
    t = await createTestApp(engine);
    root = bearer(await t.rootToken());
    rootId = (await t.ctx.usersRepo.byUsername('root'))?.id as number;
    stdioId = (
      await t.ctx.services.rows.insert(
        serviceRow({
          name: 'audit-stdio',
          source: 'npm',
          package_manager: 'npm',
          package_name: '@audit/tool',
          command: process.execPath,
          args_json: JSON.stringify([FIXTURE]),
        }),
      )
    ).id;
    remoteId = (
      await t.ctx.services.rows.insert(serviceRow({ name: 'audit-remote', type: 'streamableHttp', command: 'http://127.0.0.1:9/mcp' }))
    ).id;
    const group = await t.app.inject({
      method: 'POST',
      url: '/api/groups',
      headers: root,
      payload: { name: 'audit-group', members: [{ service_id: stdioId }] },
    });
    expect(group.statusCode, group.body).toBe(201);
    groupId = group.json().data.id;
  });
  afterAll(async () => t?.close());

  /** The administrative endpoints, as the app registered them. */
  const adminChanges = () => apiRoutes(t.routes).filter((r) => r.auth === 'admin' && r.method !== 'GET');

  it('maps every administrative endpoint the app registered to an audit object (none may be added without one)', () => {
    const routes = adminChanges();
    expect(routes.length).toBeGreaterThan(15);
    const unmapped = routes.map(routeKey).filter((key) => !auditedRoutes.has(key));
    expect(unmapped).toEqual([]);
    // And the mapping names no route that no longer exists.
    const registered = new Set(apiRoutes(t.routes).map(routeKey));
    expect([...auditedRoutes.keys()].filter((key) => !registered.has(key))).toEqual([]);
  });

  it('leaves exactly one entry per call of each administrative endpoint, with no secret in it', async () => {
    const routes = adminChanges();
    const missing = routes.map(routeKey).filter((key) => !(key in calls));
    expect(missing, 'an administrative endpoint without a call in this test').toEqual([]);
    for (const r of routes) {
      const key = routeKey(r);
      const call = await (calls[key] as () => Promise<Call> | Call)();
      const before = await newestId();
      const res = await t.app.inject({
        method: call.method,
        url: call.url,
        headers: { ...root, ...(call.payload !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(call.payload !== undefined ? { payload: typeof call.payload === 'string' ? call.payload : JSON.stringify(call.payload) } : {}),
      });
      expect(res.statusCode, `${key}: ${res.body}`).toBeLessThan(500);
      const entries = await entriesAfter(before);
      expect(entries.length, `${key} left ${entries.length} entries`).toBe(1);
      const entry = entries[0] as AuditEntry;
      const mapping = auditedRoutes.get(key);
      expect(entry, key).toMatchObject({
        actor_type: 'user',
        actor_id: rootId,
        actor_name: 'root',
        object_type: mapping?.object,
        via: key,
        outcome: res.statusCode < 400 ? 'ok' : 'failed',
      });
      expect(entry.address, key).not.toBe('');
      expect(JSON.stringify(entry), `${key} stored a secret`).not.toContain(PLANTED);
    }
    // The stored rows too, column by column, not only what the API shows.
    const rows = await t.ctx.db.selectFrom('audit_entries').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(PLANTED);
  });

  it('describes the change: the request’s fields, masked, with the object’s id', async () => {
    const before = await newestId();
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: root,
      payload: {
        name: unique('described'),
        type: 'streamableHttp',
        url: `http://127.0.0.1:9/mcp?api_key=${secret('described')}&region=eu`,
        headers: { 'X-Api-Key': secret('described-header') },
        description: 'A described service',
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const [entry] = await entriesAfter(before);
    expect(entry).toMatchObject({
      action: 'create',
      object_type: 'service',
      object_id: String(made.json().data.service_id),
      changes: {
        body: {
          url: 'http://127.0.0.1:9/mcp?api_key=********&region=eu',
          headers: { 'X-Api-Key': '********' },
          description: 'A described service',
        },
      },
    });

    const option = await newestId();
    expect(
      (await t.app.inject({ method: 'PUT', url: '/api/option/', headers: root, payload: { key: 'TimeZone', value: 'Asia/Shanghai' } }))
        .statusCode,
    ).toBe(200);
    const [changed] = await entriesAfter(option);
    expect(changed).toMatchObject({
      object_type: 'option',
      object_id: 'TimeZone',
      changes: { body: { key: 'TimeZone', value: 'Asia/Shanghai' } },
    });

    const manage = await newestId();
    const v = await victim();
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/user/manage', headers: root, payload: { username: v.username, action: 'disable' } }))
        .statusCode,
    ).toBe(200);
    const [disabled] = await entriesAfter(manage);
    expect(disabled).toMatchObject({ object_type: 'user', action: 'disable', object_id: String(v.id) });
  });

  it('records sign-ins and refused sign-ins, without the password', async () => {
    const before = await newestId();
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: secret('wrong-password') },
    });
    expect(wrong.statusCode).toBe(401);
    await t.login('root', ADMIN_PASSWORD);
    const [refused, signedIn] = await entriesAfter(before);
    expect(refused).toMatchObject({
      actor_type: 'anonymous',
      actor_id: null,
      actor_name: 'root',
      object_type: 'session',
      action: 'sign_in',
      outcome: 'refused',
      changes: { body: { username: 'root', password: '********' } },
    });
    expect(signedIn).toMatchObject({ actor_type: 'user', actor_id: rootId, actor_name: 'root', outcome: 'ok', object_id: String(rootId) });
    expect(JSON.stringify(signedIn)).not.toContain(ADMIN_PASSWORD);

    // A provider's callback with a state this server never issued: refused, its code never stored.
    const provider = await newestId();
    const forged = await t.app.inject({ method: 'GET', url: `/api/oauth/github?code=${secret('code')}&state=forged-state` });
    expect(forged.statusCode).toBe(400);
    const [callback] = await entriesAfter(provider);
    expect(callback).toMatchObject({ object_type: 'session', outcome: 'refused', changes: { provider: 'github' } });
    expect(JSON.stringify(callback)).not.toContain(PLANTED);
  });

  it('records exports, and nothing of a user’s own calls or of callers the guard refused', async () => {
    const user = await suiteUser(t);
    const before = await newestId();
    // A user's personal switch and own values are not administrative; an admin route is refused by the guard.
    expect((await t.app.inject({ method: 'POST', url: `/api/mcp_services/${stdioId}/toggle`, headers: user.headers })).statusCode).toBe(
      200,
    );
    expect(
      (await t.app.inject({ method: 'PUT', url: '/api/option/', headers: user.headers, payload: { key: 'TimeZone', value: 'UTC' } }))
        .statusCode,
    ).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/api/mcp_market/export', headers: user.headers })).statusCode).toBe(403);
    expect(await entriesAfter(before)).toEqual([]);

    const exported = await t.app.inject({ method: 'GET', url: '/api/mcp_market/export?include_secrets=true', headers: root });
    expect(exported.statusCode).toBe(200);
    const [entry] = await entriesAfter(before);
    expect(entry).toMatchObject({ object_type: 'export', action: 'export_services', changes: { query: { include_secrets: 'true' } } });
  });

  it('filters by actor, object and time, pages like the logs, and exports JSON lines', async () => {
    const admin = await suiteUser(t, Role.Admin);
    const start = Date.now();
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/groups/${groupId}`,
        headers: admin.headers,
        payload: { name: 'audit-group', members: [{ service_id: stdioId }], description: `v${i}` },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const list = (q: string) => t.app.inject({ method: 'GET', url: `/api/audit?${q}`, headers: root });
    const mine = await list(`actor=${admin.id}&object_type=group&object_id=${groupId}&page_size=2`);
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json().data).toMatchObject({ total: 3, page: 1 });
    const first = mine.json().data.entries as AuditEntry[];
    expect(first.map((e) => e.changes)).toEqual([
      { params: { id: String(groupId) }, body: expect.objectContaining({ description: 'v2' }) },
      expect.anything(),
    ]);
    const second = await list(`actor=${admin.id}&object_type=group&object_id=${groupId}&page_size=2&page=2`);
    expect((second.json().data.entries as AuditEntry[]).map((e) => (e.changes.body as { description: string }).description)).toEqual([
      'v0',
    ]);
    const username = first[0]?.actor_name as string;
    expect((await list(`actor=${encodeURIComponent(username)}&object_type=group`)).json().data.total).toBe(3);
    expect((await list(`actor=${admin.id}&since=${new Date(start).toISOString()}`)).json().data.total).toBe(3);
    expect((await list(`actor=${admin.id}&until=${start}`)).json().data.total).toBe(0);
    expect((await list('actor=nobody-at-all')).json().data).toMatchObject({ total: 0, entries: [] });

    const before = await newestId();
    const exported = await t.app.inject({ method: 'GET', url: `/api/audit/export?actor=${admin.id}`, headers: root });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toContain('application/x-ndjson');
    const lines = exported.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEntry);
    expect(lines.map((l) => (l.changes.body as { description: string }).description)).toEqual(['v0', 'v1', 'v2']);
    // Exporting the trail is recorded too.
    expect((await entriesAfter(before)).map((e) => e.action)).toEqual(['export_audit']);
  });

  it('answers 403 to a non-admin and 400, never 500, to crafted filters', async () => {
    const user = await suiteUser(t);
    for (const url of ['/api/audit', '/api/audit/export']) {
      const res = await t.app.inject({ method: 'GET', url, headers: user.headers });
      expect(res.statusCode, url).toBe(403);
    }
    const crafted = [
      'since=yesterday',
      'until=2026-13-45T99:00:00Z',
      'since=-5',
      'since=1e400',
      'object_type=service%27%20OR%201%3D1--',
      `actor=${'a'.repeat(300)}`,
      `object_id=${'%00'.repeat(3)}`,
      'page=0',
      'page_size=100000',
      'page=abc',
    ];
    for (const q of crafted) {
      for (const lang of ['en', 'zh-CN']) {
        const res = await t.app.inject({ method: 'GET', url: `/api/audit?${q}`, headers: { ...root, 'accept-language': lang } });
        expect(res.statusCode, `${q} (${lang}): ${res.body}`).toBe(400);
        expect(res.json().success).toBe(false);
        expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/);
      }
    }
    const zh = await t.app.inject({ method: 'GET', url: '/api/audit?since=yesterday', headers: { ...root, 'accept-language': 'zh-CN' } });
    expect(zh.json().message).toMatch(/[\u4e00-\u9fff]/);
    // A name the API does not know is ignored, not read as an operator.
    const operator = await t.app.inject({ method: 'GET', url: '/api/audit?since[$gt]=0&page_size=1', headers: root });
    expect(operator.statusCode).toBe(200);
    // A quote in a filter is a value, not SQL.
    const quoted = await t.app.inject({ method: 'GET', url: `/api/audit?actor=${encodeURIComponent("root' OR '1'='1")}`, headers: root });
    expect(quoted.statusCode).toBe(200);
    expect(quoted.json().data.total).toBe(0);
  });

  it('bounds what a deeply nested or huge body leaves in the trail', async () => {
    let nested: unknown = { password: secret('deep') };
    for (let i = 0; i < 40; i++) nested = { next: nested };
    const before = await newestId();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      headers: root,
      payload: { mcpServers: {}, extra: nested, filler: 'x'.repeat(100_000) },
    });
    expect(res.statusCode).toBeLessThan(500);
    const [entry] = await entriesAfter(before);
    expect(entry?.outcome).toBeDefined();
    const text = JSON.stringify(entry);
    expect(text).not.toContain(PLANTED);
    expect(text.length).toBeLessThan(40 * 1024);
  });

  it('forwards entries to the log stream only while AuditLogForwarding is on, and purges them with the request records', async () => {
    expect(t.ctx.options.bool('AuditLogForwarding')).toBe(false);
    const lines: unknown[] = [];
    const info = t.ctx.logger.info.bind(t.ctx.logger);
    t.ctx.logger.info = ((obj: unknown, ...rest: unknown[]) => {
      lines.push(obj);
      return (info as (...a: unknown[]) => void)(obj, ...rest);
    }) as typeof t.ctx.logger.info;
    try {
      const put = (value: string) =>
        t.app.inject({ method: 'PUT', url: '/api/option/', headers: root, payload: { key: 'AuditLogForwarding', value } });
      const forwarded = () => lines.filter((l) => l && typeof l === 'object' && 'audit' in l) as { audit: AuditEntry }[];
      expect(
        (await t.app.inject({ method: 'PUT', url: '/api/option/', headers: root, payload: { key: 'TimeZone', value: 'UTC' } })).statusCode,
      ).toBe(200);
      expect(forwarded()).toEqual([]);
      // The change that turns forwarding on is the first one forwarded; the one that turns it off is not.
      expect((await put('true')).statusCode).toBe(200);
      expect((await put('false')).statusCode).toBe(200);
      expect(forwarded().map((l) => l.audit)).toEqual([
        expect.objectContaining({
          object_type: 'option',
          object_id: 'AuditLogForwarding',
          actor_name: 'root',
          changes: { body: { key: 'AuditLogForwarding', value: 'true' } },
        }),
      ]);
    } finally {
      t.ctx.logger.info = info;
    }

    const old = await t.ctx.audit.trail.record({
      created_at: Date.now() - 100 * 86_400_000,
      actor_type: 'cli',
      actor_id: null,
      actor_name: 'operator',
      address: '',
      action: 'backup',
      object_type: 'backup',
      object_id: '',
      outcome: 'ok',
      via: 'toolport backup',
      changes: {},
    });
    await t.ctx.options.set('RequestRecordRetentionDays', '90');
    const report = await t.ctx.retention.runOnce();
    expect(report).not.toBe('busy');
    expect(report).toMatchObject({ auditEntries: 1 });
    expect(await t.ctx.db.selectFrom('audit_entries').select('id').where('id', '=', old.id).executeTakeFirst()).toBeUndefined();
    // The recent ones stay.
    expect(await newestId()).toBeGreaterThan(0);
    expect((await t.app.inject({ method: 'GET', url: '/api/audit?object_id=AuditLogForwarding', headers: root })).json().data.total).toBe(
      2,
    );
  });
});
