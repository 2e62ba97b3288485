import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { type SuiteUser, suiteUser } from '../../../test/kits/services.js';
import { dayIn } from '../../infra/day.js';
import type { ConfigEvent } from '../../infra/events.js';
import type { DbMeter } from '../metering/index.js';

describe.each(engines)('managing installed services on %s', (engine) => {
  let t: TestApp;
  let admin: SuiteUser;
  let user: SuiteUser;
  let events: ConfigEvent[] = [];

  beforeAll(async () => {
    t = await createTestApp(engine);
    admin = await suiteUser(t, Role.Admin);
    user = await suiteUser(t);
    await t.ctx.options.set('StdioServiceStartupStrategy', 'demand');
    vi.spyOn(t.ctx.gateway, 'checkHealth').mockImplementation(async () => ({
      status: 'unknown',
      details: 'not started by this suite',
      checkedAt: Date.now(),
    }));
    t.ctx.events.on((e) => events.push(e));
  });
  beforeEach(() => {
    events = [];
  });
  afterAll(async () => t?.close());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, as: SuiteUser, payload?: unknown, lang = 'en') =>
    t.app.inject({
      method,
      url: `/api${url}`,
      headers: { ...as.headers, 'accept-language': lang },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const createRemote = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/mcp_market/custom_service', admin, {
      name,
      type: 'streamableHttp',
      url: 'http://127.0.0.1:9/mcp?api_key=qv1',
      headers: 'Authorization=Bearer hv1\nX-Team=blue',
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    // Each test looks at the events its own calls cause, not at the creation's.
    events = [];
    return res.json().data.service_id as number;
  };
  const createStdio = async (name: string, environments = 'TOKEN=ev1\nREGION=eu') => {
    const res = await call('POST', '/mcp_market/custom_service', admin, {
      name,
      type: 'stdio',
      command: 'npx -y some-mcp-server',
      environments,
    });
    expect(res.statusCode, res.body).toBe(201);
    events = [];
    return res.json().data.service_id as number;
  };
  const installed = async (as: SuiteUser) => {
    const res = await call('GET', '/mcp_market/installed', as);
    expect(res.statusCode).toBe(200);
    return res.json().data as Record<string, unknown>[];
  };
  const entry = async (as: SuiteUser, id: number) => (await installed(as)).find((s) => s.id === id) as Record<string, unknown>;

  it('shows admins variable and header values and everyone else only the names, masked', async () => {
    const remote = await createRemote('masked-remote');
    const stdio = await createStdio('masked-stdio');

    const forAdmin = await entry(admin, remote);
    expect(JSON.parse(forAdmin.headers_json as string)).toEqual({ Authorization: 'Bearer hv1', 'X-Team': 'blue' });
    expect(forAdmin.command).toBe('http://127.0.0.1:9/mcp?api_key=qv1');
    expect(JSON.parse((await entry(admin, stdio)).default_envs_json as string)).toEqual({ TOKEN: 'ev1', REGION: 'eu' });

    const forUser = await entry(user, remote);
    expect(JSON.parse(forUser.headers_json as string)).toEqual({ Authorization: '********', 'X-Team': '********' });
    expect(forUser.command).not.toContain('qv1');
    expect(JSON.parse((await entry(user, stdio)).default_envs_json as string)).toEqual({ TOKEN: '********', REGION: '********' });
    const whole = JSON.stringify(await installed(user));
    for (const secret of ['hv1', 'qv1', 'ev1']) expect(whole).not.toContain(secret);

    expect(forUser).toMatchObject({
      name: 'masked-remote',
      type: 'streamableHttp',
      enabled: true,
      rpd_limit: 0,
      remaining_requests: -1,
      user_daily_request_count: 0,
    });
  });

  it('sets rpd_limit alone and shows each caller their own count and remaining requests', async () => {
    const id = await createRemote('limited');
    const set = await call('PUT', `/mcp_services/${id}`, admin, { rpd_limit: 5 });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().message).toBe('Daily request limit set to 5');
    expect(events).toContainEqual({ type: 'service.changed', serviceId: id });

    const spec = await t.ctx.catalog.byId(id);
    if (!spec) throw new Error('service missing from the catalog');
    expect(spec.rpdLimit).toBe(5);
    const meter = t.ctx.meter as DbMeter;
    for (let i = 0; i < 3; i += 1) expect((await meter.admit(spec, user.id)).allowed).toBe(true);
    await meter.flush();

    expect(await entry(user, id)).toMatchObject({ rpd_limit: 5, user_daily_request_count: 3, remaining_requests: 2 });
    expect(await entry(admin, id)).toMatchObject({ rpd_limit: 5, user_daily_request_count: 0, remaining_requests: 5 });

    // A string number is accepted (the console's input), 0 means unlimited again.
    expect((await call('PUT', `/mcp_services/${id}`, admin, { rpd_limit: '0' })).json().message).toBe(
      'Daily request limit removed (unlimited)',
    );
    expect(await entry(user, id)).toMatchObject({ rpd_limit: 0, user_daily_request_count: 3, remaining_requests: -1 });

    for (const bad of [-1, 1.5, 'abc', '']) {
      const res = await call('PUT', `/mcp_services/${id}`, admin, { rpd_limit: bad });
      expect(res.statusCode, String(bad)).toBe(400);
      expect(res.json().message).toBe('The daily request limit must be a whole number of 0 or more');
    }
  });

  it('edits name, description, URL, headers and variables; only runtime changes are announced', async () => {
    const remote = await createRemote('editable');
    const cosmetic = await call('PUT', `/mcp_services/${remote}`, admin, { display_name: 'Editable', description: 'New text' });
    expect(cosmetic.statusCode, cosmetic.body).toBe(200);
    expect(cosmetic.json().message).toBe('Service updated');
    expect(events).toEqual([]);
    expect(await entry(admin, remote)).toMatchObject({ display_name: 'Editable', description: 'New text' });

    // The console sends the headers it showed: a masked value keeps the stored one.
    const edit = await call('PUT', `/mcp_services/${remote}`, admin, {
      command: 'https://other.example/mcp',
      headers_json: JSON.stringify({ Authorization: '********', 'X-New': 'n1' }),
    });
    expect(edit.statusCode, edit.body).toBe(200);
    expect(events).toEqual([{ type: 'service.changed', serviceId: remote }]);
    const after = await t.ctx.catalog.byId(remote);
    expect(after).toMatchObject({ command: 'https://other.example/mcp', headers: { Authorization: 'Bearer hv1', 'X-New': 'n1' } });

    const stdio = await createStdio('editable-stdio');
    // A pinned npx service runs its installed executable once installed (decision 0035); a PUT never changes it.
    const command = (await t.ctx.catalog.byId(stdio))?.command;
    const envs = await call('PUT', `/mcp_services/${stdio}`, admin, { default_envs_json: '{"TOKEN":"ev2"}', command: 'ignored for stdio' });
    expect(envs.statusCode, envs.body).toBe(200);
    expect(events).toEqual([{ type: 'service.changed', serviceId: stdio }]);
    expect(await t.ctx.catalog.byId(stdio)).toMatchObject({ command, env: { TOKEN: 'ev2' } });
    expect(command).not.toBe('ignored for stdio');

    for (const [payload, message] of [
      [{ display_name: '  ' }, 'Display name cannot be empty'],
      [{ command: 'not a url' }, 'Please enter a valid URL'],
      [{ command: '' }, 'URL cannot be empty'],
      [{ headers_json: { 'bad name': 'x' } }, 'Invalid request header'],
    ] as const) {
      const res = await call('PUT', `/mcp_services/${remote}`, admin, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message).toContain(message);
    }
  });

  it('answers "Invalid Service ID format." for a non-integer id and 404 for an unknown one', async () => {
    for (const [method, url, body] of [
      ['PUT', '/mcp_services/abc', { rpd_limit: 1 }],
      ['POST', '/mcp_services/1.5/toggle', undefined],
      ['POST', '/mcp_services/-3/health/check', undefined],
      ['POST', '/mcp_market/uninstall', { service_id: 'x1' }],
    ] as const) {
      const res = await call(method, url, admin, body);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message).toBe('Invalid Service ID format.');
    }
    expect((await call('POST', '/mcp_services/abc/toggle', admin, undefined, 'zh-CN')).json().message).toBe('服务 ID 格式无效。');
    const missing = await call('POST', '/mcp_services/987654/toggle', admin);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('Service not found');
    expect((await call('POST', '/mcp_services/987654/health/check', user)).statusCode).toBe(404);
  });

  it('toggles a service off and on, announcing each change', async () => {
    const id = await createRemote('toggled');
    const off = await call('POST', `/mcp_services/${id}/toggle`, admin);
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ message: 'Service disabled', data: { id, enabled: false } });
    expect(events).toEqual([{ type: 'service.changed', serviceId: id }]);
    expect(await entry(user, id)).toMatchObject({ enabled: false, health_status: 'stopped' });
    expect((await t.ctx.catalog.enabledServices()).map((s) => s.id)).not.toContain(id);
    // Checked while off (as the gateway records it), it says why it is stopped.
    await t.ctx.db.updateTable('services').set({ health_details: 'service is disabled' }).where('id', '=', id).execute();
    expect(await entry(user, id)).toMatchObject({ health_status: 'stopped', health_details: 'service is disabled' });
    events.length = 0;

    const on = await call('POST', `/mcp_services/${id}/toggle`, admin);
    expect(on.json()).toMatchObject({ message: 'Service enabled', data: { id, enabled: true } });
    // Enabled again, that reason no longer holds: it is not shown beside its new state.
    expect((await entry(user, id)).health_details).not.toBe('service is disabled');
    // The change of the enable (a health note of it may arrive beside it on a busy machine).
    expect(events.filter((e) => e.type === 'service.changed' && 'serviceId' in e && e.serviceId === id)).toHaveLength(1);
    expect(on.json().data.scope).toBe('global');
  });

  it('gives a non-admin a personal switch: off for that user alone, listed for admins, the proxy refuses only them', async () => {
    const id = await createRemote('switched-personally');
    const other = await suiteUser(t);
    const off = await call('POST', `/mcp_services/${id}/toggle`, user, undefined, 'zh-CN');
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ message: '已为你停用该服务，其他用户不受影响', data: { id, enabled: false, scope: 'personal' } });
    // The user's own view changed, and the user's cached gateway view is dropped; the service itself did not.
    expect(events).toEqual([{ type: 'user.changed', userId: user.id }]);
    expect(await entry(user, id)).toMatchObject({ enabled: false, globally_enabled: true, switched_off_by_me: true, switched_off_by: [] });
    expect(await entry(other, id)).toMatchObject({ enabled: true, switched_off_by_me: false });
    const row = await t.ctx.db.selectFrom('users').select('username').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(await entry(admin, id)).toMatchObject({ enabled: true, switched_off_by: [row.username] });
    expect((await t.ctx.catalog.enabledServices()).map((s) => s.id)).toContain(id);
    expect((await t.ctx.catalog.userByApiKey(user.apiKey))?.switchedOff.has(id)).toBe(true);
    expect((await t.ctx.catalog.userByApiKey(other.apiKey))?.switchedOff.has(id)).toBe(false);

    const on = await call('POST', `/mcp_services/${id}/toggle`, user);
    expect(on.json()).toMatchObject({ message: 'Service switched on for you', data: { id, enabled: true, scope: 'personal' } });
    expect(await entry(user, id)).toMatchObject({ enabled: true, switched_off_by_me: false });
    expect(await entry(admin, id)).toMatchObject({ switched_off_by: [] });
  });

  it('uninstalls: announces the removal, deletes the row and files under DATA_DIR/packages, keeps history', async () => {
    const id = await createStdio('to-remove');
    const packageDir = path.join(t.dataDir, 'packages', 'npm', 'to-remove');
    mkdirSync(packageDir, { recursive: true });
    writeFileSync(path.join(packageDir, 'index.js'), '');
    await t.ctx.db.updateTable('services').set({ install_dir: packageDir }).where('id', '=', id).execute();
    await t.ctx.db
      .insertInto('daily_counters')
      .values({ day: dayIn('UTC'), service_id: id, user_id: user.id, request_count: 4, error_count: 0, total_latency_ms: 10 })
      .execute();
    await t.ctx.db
      .insertInto('service_logs')
      .values({ created_at: Date.now(), service_id: id, service_name: 'to-remove', phase: 'run', level: 'info', message: 'hello' })
      .execute();

    const res = await call('POST', '/mcp_market/uninstall', admin, { service_id: String(id) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().message).toBe('Service uninstalled');
    expect(events).toContainEqual({ type: 'service.removed', serviceId: id });
    expect(await t.ctx.catalog.byId(id)).toBeUndefined();
    expect(existsSync(packageDir)).toBe(false);
    expect(await t.ctx.db.selectFrom('daily_counters').selectAll().where('service_id', '=', id).execute()).toHaveLength(1);
    expect(await t.ctx.db.selectFrom('service_logs').selectAll().where('service_id', '=', id).execute()).not.toHaveLength(0);
    expect((await installed(admin)).map((s) => s.id)).not.toContain(id);
    expect((await call('POST', '/mcp_market/uninstall', admin, { service_id: id })).statusCode).toBe(404);
  });

  it('never deletes an install_dir outside DATA_DIR/packages', async () => {
    const id = await createStdio('own-dir');
    const outside = mkdtempSync(path.join(tmpdir(), 'toolport-own-'));
    try {
      await t.ctx.db.updateTable('services').set({ install_dir: outside }).where('id', '=', id).execute();
      expect((await call('POST', '/mcp_market/uninstall', admin, { service_id: id })).statusCode).toBe(200);
      expect(existsSync(outside)).toBe(true);
      // A path that only looks like it is under packages/ does not count either.
      const sneaky = await createStdio('sneaky-dir');
      const kept = path.join(t.dataDir, 'kept');
      mkdirSync(kept, { recursive: true });
      await t.ctx.db
        .updateTable('services')
        .set({ install_dir: `${t.dataDir}/packages/../kept` })
        .where('id', '=', sneaky)
        .execute();
      expect((await call('POST', '/mcp_market/uninstall', admin, { service_id: sneaky })).statusCode).toBe(200);
      expect(existsSync(kept)).toBe(true);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('stores a user’s own values encrypted, shows them masked, and only for the service’s variables', async () => {
    const id = await createStdio('personal', 'TOKEN=default-token\nREGION=eu');
    const names = await call('GET', `/mcp_services/${id}/my_env`, user);
    expect(names.json().data).toEqual({ names: ['REGION', 'TOKEN'], env: {} });

    const refused = await call('PUT', `/mcp_services/${id}/my_env`, user, { env: { NODE_OPTIONS: '--require /tmp/x.js' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe('This service does not use a variable named "NODE_OPTIONS"');

    const set = await call('PUT', `/mcp_services/${id}/my_env`, user, { env: { TOKEN: 'mine-123' } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.env).toEqual({ TOKEN: '********' });
    expect(events).toContainEqual({ type: 'service.changed', serviceId: id });
    expect(await t.ctx.catalog.userEnv(id, user.id)).toEqual({ TOKEN: 'mine-123' });
    expect(await t.ctx.catalog.userEnv(id, admin.id)).toBeUndefined();
    const raw = await t.ctx.db.selectFrom('service_user_envs').selectAll().where('service_id', '=', id).executeTakeFirstOrThrow();
    expect(raw.env_enc).not.toContain('mine-123');
    expect(await entry(user, id)).toMatchObject({ my_env_names: ['TOKEN'] });

    // Sending back the mask keeps the value; an empty value removes it.
    await call('PUT', `/mcp_services/${id}/my_env`, user, { env: { TOKEN: '********', REGION: 'us' } });
    expect(await t.ctx.catalog.userEnv(id, user.id)).toEqual({ TOKEN: 'mine-123', REGION: 'us' });
    await call('PUT', `/mcp_services/${id}/my_env`, user, { env: { TOKEN: '', REGION: '' } });
    expect(await t.ctx.catalog.userEnv(id, user.id)).toBeUndefined();
  });
});
