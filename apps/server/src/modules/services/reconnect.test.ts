import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { engines, type TestApp } from '../../../test/harness.js';
import { POLL, type StdioServiceKit, type SuiteUser, startStdioServiceKit } from '../../../test/kits/services.js';

const FIXTURE = new URL('../../../test/fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;
const MEMORY_BIN = new URL('../../../../../node_modules/.bin/mcp-server-memory', import.meta.url).pathname;

/**
 * Issue 15, items 1 and 9: Reconnect (restart the service's link, then check it) and a description taken from
 * the server's own `initialize` when none was typed. Real MCP servers through the real gateway.
 */
describe.each(engines)('reconnect and server descriptions on %s', (engine) => {
  let kit: StdioServiceKit;
  let t: TestApp;
  let admin: SuiteUser;
  let user: SuiteUser;

  beforeAll(async () => {
    kit = await startStdioServiceKit(engine);
    ({ t, admin, user } = kit);
  });
  afterAll(async () => kit?.close());

  const install = async (payload: { name: string; command: string } & Record<string, unknown>) => {
    const created = await kit.createStdio(payload);
    const task = await kit.finishedTask(created.task_id);
    expect(task.status, task.logs.join('\n')).toBe('completed');
    return created.service_id;
  };
  const row = (id: number) => t.ctx.db.selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const reconnect = (id: number | string, as: SuiteUser, lang = 'en') =>
    t.app.inject({ method: 'POST', url: `/api/mcp_services/${id}/reconnect`, headers: { ...as.headers, 'accept-language': lang } });

  it('gives a service created without a description its server’s name and version', async () => {
    const id = await install({ name: 'memory-described', command: MEMORY_BIN });
    await vi.waitFor(async () => expect((await row(id)).description).toMatch(/^memory-server \d+\.\d+\.\d+$/), POLL);
  });

  it('gives one the first paragraph of its server’s instructions, and never overwrites a typed description', async () => {
    const fromServer = await install({ name: 'fixture-described', command: `${process.execPath} ${FIXTURE}` });
    await vi.waitFor(async () => expect((await row(fromServer)).description).toMatch(/^capabilities seen: \{/), POLL);

    const typed = await install({ name: 'fixture-typed', command: `${process.execPath} ${FIXTURE}`, description: 'Typed by the admin' });
    expect(
      (await t.app.inject({ method: 'POST', url: `/api/mcp_services/${typed}/health/check`, headers: admin.headers })).statusCode,
    ).toBe(200);
    expect((await row(typed)).description).toBe('Typed by the admin');
  });

  it('restarts the service’s process and answers the fresh health check', async () => {
    const pidFile = path.join(kit.scratch, 'pids');
    const id = await install({ name: 'fixture-reconnect', command: `${process.execPath} ${FIXTURE}`, environments: { PID_FILE: pidFile } });
    const started = () =>
      readFileSync(pidFile, 'utf8')
        .split('\n')
        .filter((line, i) => i % 2 === 0 && line);
    // The install's own check ran a process; under the default `boot` strategy the shared one runs next.
    await vi.waitFor(() => expect(started().length).toBeGreaterThanOrEqual(2), POLL);
    const before = started();

    const res = await reconnect(id, admin);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ success: true, message: 'Reconnected: the service answers' });
    expect(res.json().data).toMatchObject({ health_status: 'healthy', tool_count: expect.any(Number) });
    // A new process started (its pid appended), and the running link is the new one.
    const after = started();
    expect(after.length).toBeGreaterThan(before.length);
    expect(after.at(-1)).not.toBe(before.at(-1));
    expect((await row(id)).health_status).toBe('healthy');
  });

  it('says why a reconnected service still does not answer', async () => {
    const dir = path.join(kit.scratch, 'gone');
    mkdirSync(dir);
    const id = await install({
      name: 'fixture-goes-bad',
      command: `${process.execPath} ${FIXTURE}`,
      environments: { PID_FILE: path.join(dir, 'pids') },
    });
    // Its PID_FILE's directory disappears: every new process of it now fails at start.
    rmSync(dir, { recursive: true });
    const res = await reconnect(id, admin, 'zh-CN');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().message).toBe('已重新连接，但服务暂时没有响应');
    expect(res.json().data.health_status).toBe('unhealthy');
    expect(res.json().data.health_details).not.toBe('');
  });

  it('is for administrators; a disabled or unknown service is a localised 4xx', async () => {
    const id = (await t.ctx.catalog.byName('memory-described'))?.id;
    if (!id) throw new Error('the first test did not install the service');
    expect((await reconnect(id, user)).statusCode).toBe(403);
    expect((await reconnect(999_999, admin)).statusCode).toBe(404);
    expect((await reconnect('abc', admin)).statusCode).toBe(400);

    await t.app.inject({ method: 'POST', url: `/api/mcp_services/${id}/toggle`, headers: admin.headers });
    const en = await reconnect(id, admin);
    expect(en.statusCode).toBe(400);
    expect(en.json()).toMatchObject({ success: false, message: 'memory-described is disabled: enable it to reconnect' });
    const zh = await reconnect(id, admin, 'zh-CN');
    expect(zh.json().message).toBe('memory-described 已禁用：启用后才能重新连接');
  });
});
