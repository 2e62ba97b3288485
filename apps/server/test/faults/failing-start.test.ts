import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, type TestApp } from '../harness.js';
import { waitForTask } from '../kits/install.js';

/**
 * A stdio service whose command fails at start says why (docs/decisions/0045): the meaningful end of what it
 * printed on stderr is the health reason of the API and the outcome of its install, secrets redacted, and the
 * Logs show that start's stderr as one entry, in order, at Error level. Real processes, the real app.
 */
describe('a stdio service that fails at start', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp('sqlite', {}, { gateway: { tuning: { backoffBaseMs: 60_000 } } });
    token = await t.rootToken();
  });
  afterAll(async () => t?.close());

  /** A custom stdio service, once its install (its first health check) has finished. */
  const install = async (name: string, command: string, environments = '') => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: bearer(token),
      payload: { name, type: 'stdio', command, environments },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { task_id: taskId, service_id: id } = res.json().data as { task_id: string; service_id: number };
    return { id, status: await waitForTask(t, token, taskId, 60_000) };
  };
  const healthOf = async (id: number) => {
    const res = await t.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: bearer(token) });
    return (res.json().data as { id: number; health_status: string; health_details: string }[]).find((s) => s.id === id);
  };
  const logsOf = async (id: number) => {
    await t.ctx.serviceLog.flush();
    const res = await t.app.inject({ method: 'GET', url: `/api/mcp_logs?service_id=${id}&page_size=100`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.logs as { level: string; message: string }[];
  };

  it('names the missing module in the health reason and the install outcome, and logs its stderr as one error', async () => {
    const script = '/nonexistent/acme-server.js';
    const { id, status } = await install('missing-module', `${process.execPath} ${script}`);
    const why = `tool server exited with code 1: Error: Cannot find module '${script}'`;
    expect(status.status).toBe('failed');
    expect(status.error_message).toContain(why);
    expect(await healthOf(id)).toMatchObject({ health_status: 'unhealthy', health_details: expect.stringContaining(why) });

    const logs = await logsOf(id);
    // Started twice (the install's check, then at boot), each start's whole stderr is one entry, in the order it
    // was written, at Error level; no line of it stands alone.
    const stderr = logs.filter((l) => l.message.includes('throw err;'));
    expect(stderr.length).toBeGreaterThanOrEqual(1);
    const order = [
      'throw err;',
      `Error: Cannot find module '${script}'`,
      'at Module._resolveFilename',
      "code: 'MODULE_NOT_FOUND'",
      'Node.js v',
    ];
    for (const entry of stderr) {
      expect(entry.level).toBe('error');
      const at = order.map((part) => entry.message.indexOf(part));
      expect(at.every((i) => i >= 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    }
    expect(logs.filter((l) => /^(Node\.js v|\s+at |Error: Cannot find module)/.test(l.message))).toEqual([]);
  });

  it('redacts the service’s secrets from the reason, as the service log does', async () => {
    const secret = 'acme-tok-3f9a1c77';
    const { id, status } = await install(
      'prints-its-token',
      `/bin/sh -c 'echo "error: login refused for token $ACME_TOKEN" >&2; exit 4'`,
      `ACME_TOKEN=${secret}`,
    );
    const why = 'tool server exited with code 4: error: login refused for token [REDACTED]';
    expect(status.error_message).toContain(why);
    expect((await healthOf(id))?.health_details).toContain(why);
    const logs = await logsOf(id);
    expect(logs.some((l) => l.level === 'error' && l.message === 'error: login refused for token [REDACTED]')).toBe(true);
    for (const said of [status.error_message, ...status.logs, (await healthOf(id))?.health_details, ...logs.map((l) => l.message)]) {
      expect(said).not.toContain(secret);
    }
  });
});
