import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { type CliRun, ensureBuiltCli, exitOf, freePort, runCli, waitUntilReady } from './built-cli.js';
import { connect, type McpClient, textOf, until } from './gateway/clients.js';
import { everythingEntry } from './gateway/gateway-harness.js';

const ADMIN_PASSWORD = 'shutdown-test-password';
const SECRET_KEY = 'shutdown-test-secret-key-0123456789abcdef';
const GRACE_MS = 15_000;
/** Long enough that SIGTERM lands mid-call: progress after each second, the answer after the last. */
const SLOW = { duration: 4, steps: 4 };
const SLOW_ANSWER = 'Long running operation completed. Duration: 4 seconds, Steps: 4.';

interface Server {
  run: CliRun;
  port: number;
  url: string;
}

/** The process tree under `root` (not zombies): what the server started, read from /proc. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  const zombies = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(ppid));
      if (state === 'Z') zombies.add(Number(entry));
    } catch {
      // Ended while /proc was read.
    }
  }
  const under = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === root) return true;
    return false;
  };
  return [...parentOf.keys()].filter((pid) => !zombies.has(pid) && under(pid));
}

/** Alive and not a zombie: a process that would keep running after the server is gone. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether a new TCP connection to the port is accepted or refused. */
function dial(port: number): Promise<'accepted' | 'refused' | string> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve('accepted');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : String(err.code)));
  });
}

/**
 * SIGTERM to the real server process (the built `toolport start`) while real MCP clients wait on a
 * slow tool of a stdio server-everything started through `sh` (so it is a grandchild, as under npx):
 * the listener closes at once, the calls in flight still get their answers, the process exits 0,
 * no upstream process survives, and the restarted server counted and recorded every call exactly once.
 */
describe('graceful shutdown of toolport start', () => {
  let root: string;
  let dataDir: string;
  let apiKey = '';
  let serviceId = 0;
  const clients: McpClient[] = [];

  const start = async (env: Record<string, string> = {}): Promise<Server> => {
    const port = await freePort();
    const run = runCli(['start'], {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PASSWORD,
      SECRET_KEY,
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      ...env,
    });
    await waitUntilReady(run, port);
    return { run, port, url: `http://127.0.0.1:${port}` };
  };
  const api = async (server: Server, method: string, url: string, token?: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as { success: boolean; data?: unknown; message?: string };
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${json.message}`);
    return json.data;
  };
  const rootToken = async (server: Server) =>
    ((await api(server, 'POST', '/api/auth/login', undefined, { username: 'root', password: ADMIN_PASSWORD })) as { access_token: string })
      .access_token;
  const usage = () => {
    const db = new SQLite(path.join(dataDir, 'toolport.db'), { readonly: true });
    try {
      return {
        counted: Number(
          db.prepare('select coalesce(sum(request_count), 0) from daily_counters where service_id = ?').pluck().get(serviceId),
        ),
        records: db.prepare('select outcome, target from request_records where service_id = ? order by id').all(serviceId) as {
          outcome: string;
          target: string;
        }[],
      };
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(path.join(tmpdir(), 'toolport-shutdown-'));
    dataDir = path.join(root, 'data');
    const server = await start();
    const token = await rootToken(server);
    const created = (await api(server, 'POST', '/api/mcp_market/custom_service', token, {
      name: 'slow',
      type: 'stdio',
      // Through a shell that waits for it: the tool server is the gateway's grandchild, as under npx or uvx.
      command: `/bin/sh -c '${process.execPath} ${everythingEntry} stdio; exit'`,
    })) as { service_id: number; task_id?: string };
    serviceId = created.service_id;
    if (created.task_id) {
      await until(
        async () =>
          ((await api(server, 'GET', `/api/mcp_market/install_status/${created.task_id}`, token)) as { status: string }).status ===
          'completed',
        'the service to be installed',
        30_000,
      );
    }
    apiKey = (await api(server, 'GET', '/api/user/token', token)) as string;
    server.run.child.kill('SIGTERM');
    expect(await exitOf(server.run)).toBe(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    rmSync(root, { recursive: true, force: true });
  });

  it('lets the calls in flight finish, refuses new connections, exits 0 and leaves no process behind', { timeout: 120_000 }, async () => {
    const server = await start();
    const wires = [
      { sdk: 'v1', wire: 'http' },
      { sdk: 'v2', wire: 'http' },
      { sdk: 'v1', wire: 'http' },
      { sdk: 'v2', wire: 'sse' },
    ] as const;
    for (const opts of wires) clients.push(await connect(server.url, 'slow', apiKey, opts));
    const progress: Progress[][] = wires.map(() => []);
    let settled = 0;
    const calls = clients.map((c, i) =>
      c.callTool('trigger-long-running-operation', SLOW, { onprogress: (p) => progress[i]?.push(p) }).finally(() => {
        settled += 1;
      }),
    );
    // Every call has reached the tool server: each has seen its first progress notification.
    await until(() => progress.every((p) => p.length > 0), 'every call to be under way');
    const upstream = descendants(server.run.child.pid as number);
    // The shell and the server-everything it started.
    expect(upstream.length).toBeGreaterThanOrEqual(2);

    const signalledAt = Date.now();
    server.run.child.kill('SIGTERM');
    await until(async () => (await dial(server.port)) === 'refused', 'the listener to close', 5_000);
    expect(settled).toBe(0);

    const results = await Promise.allSettled(calls);
    expect(results.map((r) => (r.status === 'fulfilled' ? textOf(r.value) : `rejected: ${r.reason}`))).toEqual(
      wires.map(() => SLOW_ANSWER),
    );
    expect(await exitOf(server.run)).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS);
    expect(upstream.filter(alive)).toEqual([]);
    expect(server.run.stderr()).not.toMatch(/shutdown did not finish|shutdown failed/);

    // Restarted on the same DATA_DIR: every completed call counted and recorded once, nothing else.
    const again = await start();
    const token = await rootToken(again);
    const installed = (await api(again, 'GET', '/api/mcp_market/installed', token)) as { name: string; user_daily_request_count: number }[];
    expect(installed.find((s) => s.name === 'slow')?.user_daily_request_count).toBe(wires.length);
    expect(usage()).toEqual({
      counted: wires.length,
      records: wires.map(() => ({ outcome: 'ok', target: 'trigger-long-running-operation' })),
    });
    again.run.child.kill('SIGTERM');
    expect(await exitOf(again.run)).toBe(0);
  });

  it('ends a call still running when SHUTDOWN_GRACE_MS is over, records it as failed and still exits 0', { timeout: 120_000 }, async () => {
    const graceMs = 1_000;
    const server = await start({ SHUTDOWN_GRACE_MS: String(graceMs) });
    const client = await connect(server.url, 'slow', apiKey, { sdk: 'v1', wire: 'http' });
    clients.push(client);
    const progress: Progress[] = [];
    const before = usage();
    const call = client.callTool('trigger-long-running-operation', { duration: 60, steps: 60 }, { onprogress: (p) => progress.push(p) });
    await until(() => progress.length > 0, 'the call to be under way');
    const upstream = descendants(server.run.child.pid as number);
    expect(upstream.length).toBeGreaterThanOrEqual(2);

    const signalledAt = Date.now();
    server.run.child.kill('SIGTERM');
    await expect(call).rejects.toThrow();
    expect(await exitOf(server.run)).toBe(0);
    // Well before the minute the call would have taken: the grace period bounded the wait.
    expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS);
    expect(upstream.filter(alive)).toEqual([]);
    const after = usage();
    expect(after.counted).toBe(before.counted + 1);
    expect(after.records.slice(before.records.length)).toEqual([{ outcome: 'error', target: 'trigger-long-running-operation' }]);
  });

  it('honours a grace longer than 10 s: a 12 s call in flight at SIGTERM completes and the process exits 0', {
    timeout: 120_000,
  }, async () => {
    // Fastify's default pluginTimeout (10 s) also bounds close hooks: this ended in AVV_ERR_READY_TIMEOUT and exit 1.
    const server = await start({ SHUTDOWN_GRACE_MS: '30000' });
    const client = await connect(server.url, 'slow', apiKey, { sdk: 'v1', wire: 'http' });
    clients.push(client);
    const progress: Progress[] = [];
    const call = client.callTool(
      'trigger-long-running-operation',
      { duration: 12, steps: 12 },
      { onprogress: (p) => progress.push(p), timeout: 60_000 },
    );
    await until(() => progress.length > 0, 'the call to be under way');
    server.run.child.kill('SIGTERM');
    expect(textOf(await call)).toBe('Long running operation completed. Duration: 12 seconds, Steps: 12.');
    expect(await exitOf(server.run)).toBe(0);
    expect(server.run.stderr() + server.run.stdout()).not.toMatch(/shutdown failed|AVV_ERR_READY_TIMEOUT/);
  });

  it('refuses a SHUTDOWN_GRACE_MS that is not a whole number of milliseconds up to 10 minutes', () => {
    expect(loadConfig({}).shutdownGraceMs).toBe(10_000);
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs).toBe(0);
    for (const value of ['soon', '-1', '1.5', '600001']) {
      expect(() => loadConfig({ SHUTDOWN_GRACE_MS: value })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: 'soon' })).toThrow(/SHUTDOWN_GRACE_MS: .*\(got "soon"\)/);
  });
});
