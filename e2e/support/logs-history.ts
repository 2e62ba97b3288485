import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type APIRequestContext, expect } from '@playwright/test';
import { baseUrl } from './fixtures';
import { repoRoot } from './server';
import { everythingCommand } from './services-api';

/**
 * Service-log history made the way it is made in production: real stdio services installed through the API,
 * started by the gateway's process pool and called through its MCP endpoint. What the Logs screen specs then
 * check is what this file knows it caused.
 */

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function data<T>(res: Awaited<ReturnType<APIRequestContext['get']>>, what: string): Promise<T> {
  const body = (await res.json()) as { message?: string; data?: unknown };
  expect(res.ok(), `${what}: ${res.status()} ${body.message ?? ''}`).toBe(true);
  return body.data as T;
}

/** server-everything started with a transport it does not know: it prints its usage (stdout and stderr) and exits 1. */
export function brokenEverythingCommand(): string {
  const entry = path.join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  return `${process.execPath} ${entry} no-such-transport`;
}

export interface GeneratedService {
  id: number;
  name: string;
  /** Whether its install ended healthy (server-everything) or failed (the broken command). */
  healthy: boolean;
}

export interface LogHistory {
  /** Every generated service name starts with it, and no other service's does. */
  prefix: string;
  /** In the order they were installed, one after the other. */
  services: GeneratedService[];
  /** Wall-clock bounds of the generation (ms), for the timestamps shown. */
  startedAt: number;
  endedAt: number;
}

/** Creates a custom stdio service and waits until its install task has finished, however it ended. */
async function installStdio(request: APIRequestContext, token: string, name: string, command: string) {
  const created = await data<{ service_id: number; task_id: string }>(
    await request.post('/api/mcp_market/custom_service', { headers: bearer(token), data: { name, type: 'stdio', command } }),
    `create ${name}`,
  );
  let status = '';
  await expect
    .poll(
      async () => {
        const res = await request.get(`/api/mcp_market/install_status/${created.task_id}`, { headers: bearer(token) });
        status = (await data<{ status: string }>(res, 'install status')).status;
        return status === 'completed' || status === 'failed';
      },
      { timeout: 60_000, intervals: [250, 500, 1_000] },
    )
    .toBe(true);
  return { id: created.service_id, status };
}

/** One `echo` through the gateway's streamable HTTP endpoint, with the admin's API key. */
async function echoThroughGateway(name: string, apiKey: string, message: string): Promise<string> {
  const transport = new StreamableHTTPClientTransport(new URL(`/proxy/${name}/mcp`, baseUrl()), {
    requestInit: { headers: bearer(apiKey) },
  });
  const client = new Client({ name: 'e2e-logs', version: '1.0.0' });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: 'echo', arguments: { message } });
    return (result.content as { text?: string }[]).map((c) => c.text ?? '').join('');
  } finally {
    await client.close();
  }
}

async function uninstall(request: APIRequestContext, token: string, id: number): Promise<void> {
  await data(await request.post('/api/mcp_market/uninstall', { headers: bearer(token), data: { service_id: id } }), `uninstall ${id}`);
}

/** Lines of the service log matching `query` (admin API), to wait until the writer's batches have landed. */
export async function logTotal(request: APIRequestContext, token: string, query: Record<string, string>): Promise<number> {
  const params = new URLSearchParams({ page_size: '1', ...query });
  return (await data<{ total: number }>(await request.get(`/api/mcp_logs?${params}`, { headers: bearer(token) }), 'logs')).total;
}

/**
 * Installs `healthy` server-everything services, calls each through the gateway and uninstalls it, then
 * installs `broken` ones that fail to start and uninstalls them: one process at a time, and the history
 * stays after the services are gone. Resolves once every install line is readable.
 */
export async function generateLogHistory(
  request: APIRequestContext,
  token: string,
  counts: { healthy: number; broken: number },
): Promise<LogHistory> {
  const prefix = `e2e-logs-${Date.now().toString(36)}`;
  const apiKey = (await data<{ token: string }>(await request.get('/api/user/self', { headers: bearer(token) }), 'self')).token;
  const services: GeneratedService[] = [];
  const startedAt = Date.now();

  for (let i = 1; i <= counts.healthy; i += 1) {
    const name = `${prefix}-ok-${String(i).padStart(2, '0')}`;
    const { id, status } = await installStdio(request, token, name, everythingCommand());
    expect(status, `install of ${name}`).toBe('completed');
    expect(await echoThroughGateway(name, apiKey, `hello ${i}`)).toBe(`Echo: hello ${i}`);
    await uninstall(request, token, id);
    services.push({ id, name, healthy: true });
  }
  for (let i = 1; i <= counts.broken; i += 1) {
    const name = `${prefix}-bad-${i}`;
    const { id, status } = await installStdio(request, token, name, brokenEverythingCommand());
    expect(status, `install of ${name}`).toBe('failed');
    await uninstall(request, token, id);
    services.push({ id, name, healthy: false });
  }

  // The service log writes in batches about half a second apart: wait for every install line, then until
  // nothing more arrives (a failing process's last restart may still be writing when it is uninstalled).
  await expect
    .poll(() => logTotal(request, token, { service_name: prefix, phase: 'install' }), { timeout: 10_000 })
    .toBe(3 * services.length);
  let previous = -1;
  await expect
    .poll(
      async () => {
        const total = await logTotal(request, token, { service_name: prefix });
        const settled = total === previous;
        previous = total;
        return settled;
      },
      { timeout: 20_000, intervals: [1_500] },
    )
    .toBe(true);
  return { prefix, services, startedAt, endedAt: Date.now() };
}

/**
 * The three install lines of a generated service, newest first as the Logs screen lists them: a custom stdio
 * install logs its creation, the start of its first check, then the check's outcome.
 */
export function installLines(service: GeneratedService): { level: 'info' | 'error'; message: RegExp }[] {
  const escaped = service.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [
    service.healthy
      ? { level: 'info', message: /^Service is healthy: \d+ tools$/ }
      : { level: 'error', message: /^Health check failed: \S/ },
    { level: 'info', message: /^Starting the service and checking it answers initialize and tools\/list…$/ },
    { level: 'info', message: new RegExp(`^Custom service ${escaped} created: `) },
  ];
}
