import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { everythingBin, type SuiteUser, suiteUser } from '../../../test/kits/services.js';

/** Starting a real server takes a moment; the bound only stops a broken run from hanging. */
const POLL = { timeout: 25_000, interval: 100 };

describe.each(engines)('health checks through the real gateway on %s', (engine) => {
  let t: TestApp;
  let admin: SuiteUser;
  let user: SuiteUser;
  const scratch = mkdtempSync(path.join(tmpdir(), 'toolport-health-'));

  beforeAll(async () => {
    t = await createTestApp(engine);
    admin = await suiteUser(t, Role.Admin);
    user = await suiteUser(t);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const createStdio = async (name: string, command: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: admin.headers,
      payload: { name, type: 'stdio', command },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { service_id: number; task_id: string };
  };
  const finishedTask = async (taskId: string) => {
    let data: { status: string; logs: string[]; error_message: string } = { status: '', logs: [], error_message: '' };
    await vi.waitFor(async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${taskId}`, headers: admin.headers });
      data = res.json().data;
      expect(['completed', 'failed']).toContain(data.status);
    }, POLL);
    return data;
  };
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
    const script = path.join(scratch, 'exits-at-once');
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
