import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../../test/harness.js';
import { everythingBin, type StdioServiceKit, type SuiteUser, startStdioServiceKit } from '../../../test/kits/services.js';

describe.each(engines)('health checks through the real gateway on %s', (engine) => {
  let kit: StdioServiceKit;
  let t: TestApp;
  let admin: SuiteUser;
  let user: SuiteUser;

  beforeAll(async () => {
    kit = await startStdioServiceKit(engine);
    ({ t, admin, user } = kit);
  });
  afterAll(async () => kit?.close());

  const createStdio = (name: string, command: string) => kit.createStdio({ name, command });
  const finishedTask = (taskId: string) => kit.finishedTask(taskId);
  const check = (id: number, as: SuiteUser) =>
    t.app.inject({ method: 'POST', url: `/api/mcp_services/${id}/health/check`, headers: as.headers });

  it('completes a custom stdio install once the first real health check passes, and stores the result', async () => {
    const created = await createStdio('everything', `${everythingBin()} stdio`);
    const task = await finishedTask(created.task_id);
    expect(task.status, task.logs.join('\n')).toBe('completed');
    expect(task.logs[0]).toContain('Custom service everything created');
    expect(task.logs.at(-1)).toMatch(/Service is healthy: \d+ tools/);

    const listed = (await t.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: user.headers })).json().data;
    const row = listed.find((s: { id: number }) => s.id === created.service_id);
    expect(row).toMatchObject({ health_status: 'healthy' });
    expect(row.tool_count).toBeGreaterThan(0);
    expect(row.last_health_check).toEqual(expect.any(Number));

    // The install lines are in the service log too, for the Logs screen (written in batches: flushed first).
    await t.ctx.serviceLog.flush();
    const logs = await t.ctx.db
      .selectFrom('service_logs')
      .selectAll()
      .where('service_id', '=', created.service_id)
      .where('phase', '=', 'install')
      .execute();
    expect(logs.length).toBeGreaterThanOrEqual(2);
  });

  it('lets any signed-in user check a service now and answers the stored result', async () => {
    const id = (await t.ctx.catalog.byName('everything'))?.id;
    if (!id) throw new Error('the first test did not install the service');
    const before = Date.now();
    const res = await check(id, user);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ health_status: 'healthy' });
    expect(data.tool_count).toBeGreaterThan(0);
    expect(data.last_checked).toBeGreaterThanOrEqual(before);
    expect(res.json().message).toBe('Health check complete');
  });

  it('fails the install task of a command that is no MCP server, with the reason', async () => {
    const script = path.join(kit.scratch, 'exits-at-once');
    writeFileSync(script, '#!/bin/sh\necho "cannot start: missing config" >&2\nexit 3\n');
    chmodSync(script, 0o755);
    const created = await createStdio('broken-server', script);
    const task = await finishedTask(created.task_id);
    expect(task.status).toBe('failed');
    expect(task.error_message).not.toBe('');
    expect(task.logs.at(-1)).toContain('Health check failed');
    const service = await t.ctx.db.selectFrom('services').selectAll().where('id', '=', created.service_id).executeTakeFirstOrThrow();
    expect(service.health_status).toBe('unhealthy');
  });

  it('reports a disabled service as stopped without starting it', async () => {
    const id = (await t.ctx.catalog.byName('everything'))?.id;
    if (!id) throw new Error('the first test did not install the service');
    expect(
      (await t.app.inject({ method: 'POST', url: `/api/mcp_services/${id}/toggle`, headers: admin.headers })).json().data.enabled,
    ).toBe(false);
    const res = await check(id, user);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.health_status).toBe('stopped');
  });
});
