import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING } from './fixtures/upstream-kit.js';
import { bearer, createTestApp, engines, type TestApp } from './harness.js';
import { waitForTask } from './kits/install.js';

/**
 * Health reasons in the reader's language (docs/decisions/0054): the gateway's own words are said in en or
 * zh-CN, what the tool server printed is quoted as it is, and a remote that cannot be reached names the connect
 * error. Real processes, a real closed port, the real app on both engines.
 */
describe.each(engines)('health reasons in the reader’s language (%s)', (engine) => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp(engine, {}, { gateway: { tuning: { backoffBaseMs: 60_000 } } });
    token = await t.rootToken();
  });
  afterAll(async () => t?.close());

  const create = (name: string, type: string, command: string, locale: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: { ...bearer(token), 'accept-language': locale },
      payload: { name, type, command },
    });
  const listed = async (id: number, locale: string) => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/mcp_market/installed',
      headers: { ...bearer(token), 'accept-language': locale },
    });
    return (res.json().data as { id: number; health_status: string; health_details: string }[]).find((s) => s.id === id);
  };
  const check = async (id: number, locale: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/mcp_services/${id}/health/check`,
      headers: { ...bearer(token), 'accept-language': locale },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { health_status: string; health_details: string };
  };

  it('a crashing stdio server: "exited with code" in the reader’s words, its stderr quoted as it printed it', async () => {
    const stderr = 'acme: ACME_TOKEN 未设置 (is not set)';
    const res = await create('crashes', 'stdio', `/bin/sh -c 'echo "${stderr}" >&2; exit 3'`, 'zh-CN');
    expect(res.statusCode, res.body).toBe(201);
    const { service_id: id, task_id: taskId } = res.json().data as { service_id: number; task_id: string };
    const task = await waitForTask(t, token, taskId, 30_000);
    expect(task.status).toBe('failed');
    // The task is read without a language here (English); read in Chinese, its reason is said in Chinese.
    expect(task.error_message).toBe(`tool server exited with code 3: ${stderr}`);
    const zhTask = await t.app.inject({
      method: 'GET',
      url: `/api/mcp_market/install_status/${taskId}`,
      headers: { ...bearer(token), 'accept-language': 'zh-CN' },
    });
    expect(zhTask.json().data.error_message).toBe(`工具服务器已退出，退出码 3：${stderr}`);

    expect(await listed(id, 'en')).toMatchObject({ health_details: `tool server exited with code 3: ${stderr}` });
    expect(await listed(id, 'zh-CN')).toMatchObject({ health_details: `工具服务器已退出，退出码 3：${stderr}` });
    const checked = await check(id, 'zh-CN');
    expect(checked.health_status).toBe('unhealthy');
    expect(checked.health_details).toBe(`工具服务器已退出，退出码 3：${stderr}`);
  });

  it('a remote that cannot be reached names the connect error, in the reader’s words around it', async () => {
    // A port that was just free: nothing listens on it (port 9 itself is one fetch refuses to ask: "bad port").
    const port = await closedPort();
    const res = await create('closed-port', 'streamableHttp', `http://127.0.0.1:${port}/mcp`, 'zh-CN');
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    const cause = `connect ECONNREFUSED 127.0.0.1:${port}`;
    expect(body.message).toBe(`服务 closed-port 已创建，但暂时没有响应：无法启动：对该服务的请求失败：无法连接到该服务：${cause}`);
    const id = body.data.service_id as number;
    const en = await listed(id, 'en');
    expect(en?.health_details).toBe(`could not start: upstream request failed: fetch failed: ${cause}`);
    const zh = await check(id, 'zh-CN');
    expect(zh.health_details).toBe(`无法启动：对该服务的请求失败：无法连接到该服务：${cause}`);
  });

  it('a healthy check says its numbers in the reader’s words; a disabled service says it is disabled', async () => {
    const res = await create('everything-ok', 'stdio', `${process.execPath} ${EVERYTHING}`, 'en');
    expect(res.statusCode, res.body).toBe(201);
    const { service_id: id, task_id: taskId } = res.json().data as { service_id: number; task_id: string };
    expect((await waitForTask(t, token, taskId, 60_000)).status).toBe('completed');
    expect((await check(id, 'en')).health_details).toMatch(/^\d+ tools, \d+ ms$/);
    expect((await check(id, 'zh-CN')).health_details).toMatch(/^\d+ 个工具，\d+ 毫秒$/);
    const off = await t.app.inject({ method: 'POST', url: `/api/mcp_services/${id}/toggle`, headers: bearer(token) });
    expect(off.statusCode, off.body).toBe(200);
    const stopped = await check(id, 'zh-CN');
    expect(stopped).toMatchObject({ health_status: 'stopped', health_details: '该服务已停用' });
  });
});

/** A loopback port nothing listens on: bound, then closed again. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
