import type { BatchProgressEvent, McpServersDocument } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../../test/harness.js';
import { FIXTURE_SERVER } from '../../../../test/kits/install.js';
import { findExecutable } from '../installers/path-lookup.js';
import { runExportCommand } from './cli.js';

type Item = Extract<BatchProgressEvent, { name: string }>;

/**
 * Issue 17: tool overrides, access lists and groups travel with export and batch import. One instance
 * is set up through the API, exported, and the document imported on a fresh instance that knows only
 * some of the users; the fresh one then exports the same overrides, access and groups.
 */
describe.each(engines)('overrides, access and groups through export and import on %s', (engine) => {
  let source: TestApp;
  let fresh: TestApp;
  let freshBase: string;
  let doc: McpServersDocument;
  const ids: Record<string, number> = {};

  const call = async (t: TestApp, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
    const res = await t.app.inject({ method, url: `/api${url}`, headers: bearer(await t.rootToken()), ...(payload ? { payload } : {}) });
    // biome-ignore lint/suspicious/noExplicitAny: the assertions check the answers' fields themselves
    return { status: res.statusCode, body: res.json() as { data?: any; message?: string } };
  };
  const exportOf = async (t: TestApp) => {
    const res = await call(t, 'GET', '/mcp_market/export?include_secrets=true');
    expect(res.status).toBe(200);
    return res.body.data as McpServersDocument;
  };
  const serviceId = async (t: TestApp, name: string) =>
    (await t.ctx.db.selectFrom('services').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;

  beforeAll(async () => {
    source = await createTestApp(engine);
    fresh = await createTestApp(engine);
    await fresh.app.listen({ host: '127.0.0.1', port: 0 });
    const address = fresh.app.server.address();
    freshBase = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

    const node = findExecutable('node');
    for (const name of ['alpha', 'beta']) {
      const res = await call(source, 'POST', '/mcp_market/custom_service', {
        name,
        type: 'stdio',
        command: `"${node}" "${FIXTURE_SERVER}"`,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids[name] = await serviceId(source, name);
    }
    const alice = await source.createUser({ username: 'alice' });
    const bob = await source.createUser({ username: 'bob' });

    expect((await call(source, 'PUT', `/mcp_services/${ids.alpha}/tools/echo`, { alias: 'say', description: 'Says it back' })).status).toBe(
      200,
    );
    expect((await call(source, 'PUT', `/mcp_services/${ids.alpha}/tools/crash`, { enabled: false })).status).toBe(200);
    expect((await call(source, 'PUT', `/mcp_services/${ids.beta}/tools/pids`, { description: 'Process ids' })).status).toBe(200);
    expect(
      (await call(source, 'PUT', `/mcp_services/${ids.alpha}`, { access: { restricted: true, user_ids: [alice.id, bob.id] } })).status,
    ).toBe(200);
    const group = await call(source, 'POST', '/groups', {
      name: 'team',
      display_name: 'The team',
      separator: '--',
      members: [{ service_id: ids.alpha }, { service_id: ids.beta, tools: ['echo', 'pids'] }],
      access: { restricted: true, user_ids: [bob.id] },
    });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    await fresh.createUser({ username: 'alice' });
  }, 120_000);
  afterAll(async () => {
    await source?.close();
    await fresh?.close();
  });

  it('exports the overrides by original name, access by username and groups by service name, beside mcpServers', async () => {
    doc = await exportOf(source);
    expect(Object.keys(doc.mcpServers).sort()).toEqual(['alpha', 'beta']);
    expect(doc.toolport).toEqual({
      version: 1,
      services: {
        alpha: {
          tools: { crash: { enabled: false }, echo: { alias: 'say', description: 'Says it back' } },
          access: { restricted: true, users: ['alice', 'bob'] },
        },
        beta: { tools: { pids: { description: 'Process ids' } } },
      },
      groups: [
        {
          name: 'team',
          display_name: 'The team',
          description: '',
          mode: 'all',
          separator: '--',
          members: [{ service: 'alpha' }, { service: 'beta', tools: ['echo', 'pids'] }],
          access: { restricted: true, users: ['bob'] },
        },
      ],
    });
    // `toolport export` writes the same block, read straight from the database.
    const lines: string[] = [];
    await runExportCommand(['--include-secrets'], {
      env: {
        DATA_DIR: source.dataDir,
        SECRET_KEY: source.config.secretKey,
        LOG_LEVEL: 'silent',
        ...(source.config.databaseUrl ? { DATABASE_URL: source.config.databaseUrl } : {}),
      },
      print: (l) => lines.push(l),
    });
    expect(JSON.parse(lines.join('\n'))).toEqual(doc);
  });

  it('re-applies them on a fresh instance, naming the users it does not know instead of dropping them silently', async () => {
    const start = await call(fresh, 'POST', '/mcp_market/batch-import', doc);
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    expect(start.body.data.total).toBe(3);
    const res = await fetch(
      `${freshBase}/api/mcp_market/batch-import/progress/${start.body.data.task_id}?token=${encodeURIComponent(await fresh.rootToken())}`,
    );
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as BatchProgressEvent);
    const items = events.filter((e): e is Item => 'name' in e);
    const byName = Object.fromEntries(items.map((i) => [i.name, i]));
    expect(items.map((i) => [i.name, i.status])).toEqual([
      ['alpha', 'success'],
      ['beta', 'success'],
      ['team', 'success'],
    ]);
    expect(byName.alpha?.message).toContain('Toolport settings applied: 2 tool overrides; access: restricted to 1 users (and admins)');
    expect(byName.alpha?.warnings).toEqual(['Access of alpha: users not found on this instance were left out: bob']);
    expect(byName.team).toMatchObject({ kind: 'group', message: 'Group team created with 2 members' });
    expect(byName.team?.warnings).toEqual(['Access of team: users not found on this instance were left out: bob']);

    // The fresh instance now exports the same, less the user it does not have.
    const again = await exportOf(fresh);
    const expected = structuredClone(doc.toolport);
    if (!expected?.services?.alpha?.access || !expected.groups?.[0]) throw new Error('unexpected export');
    expected.services.alpha.access.users = ['alice'];
    expected.groups[0].access = { restricted: true, users: [] };
    expect(again.toolport).toEqual(expected);

    // And the gateway serves them: the live list shows the alias and leaves the disabled tool out.
    const tools = await call(fresh, 'GET', `/mcp_services/${await serviceId(fresh, 'alpha')}/tools`);
    expect(tools.status).toBe(200);
    const listed = tools.body.data.tools as { name: string; original_name: string; enabled: boolean; description: string }[];
    expect(listed.find((t) => t.original_name === 'echo')).toMatchObject({ name: 'say', description: 'Says it back', enabled: true });
    expect(listed.find((t) => t.original_name === 'crash')).toMatchObject({ enabled: false });
  }, 120_000);

  it('leaves an existing service and group as they are, and says so', async () => {
    const start = await call(fresh, 'POST', '/mcp_market/batch-import', doc);
    const res = await fetch(
      `${freshBase}/api/mcp_market/batch-import/progress/${start.body.data.task_id}?token=${encodeURIComponent(await fresh.rootToken())}`,
    );
    const items = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as BatchProgressEvent)
      .filter((e): e is Item => 'name' in e);
    expect(items.map((i) => [i.name, i.status])).toEqual([
      ['alpha', 'skipped'],
      ['beta', 'skipped'],
      ['team', 'skipped'],
    ]);
    expect(items[0]?.warnings).toEqual([
      'The existing service alpha keeps its own tool overrides and access: those of the document were not applied',
    ]);
  });

  it('refuses a malformed toolport block with a localised 400 and imports nothing', async () => {
    const bad = { mcpServers: { gamma: { command: 'node', args: [FIXTURE_SERVER] } }, toolport: { version: 1, groups: [{ name: 'x' }] } };
    const en = await call(fresh, 'POST', '/mcp_market/batch-import', bad);
    expect(en.status).toBe(400);
    expect(en.body.message).toContain('The toolport block is not valid at toolport.groups.0.members');
    const zh = await fresh.app.inject({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      headers: { ...bearer(await fresh.rootToken()), 'accept-language': 'zh-CN' },
      payload: bad,
    });
    expect(zh.statusCode).toBe(400);
    expect(zh.json().message).toContain('toolport 部分在 toolport.groups.0.members 处无效');
    expect(await fresh.ctx.db.selectFrom('services').select('id').where('name', '=', 'gamma').executeTakeFirst()).toBeUndefined();
  });
});
