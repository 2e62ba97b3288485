import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, expectOwnProgress, type McpClient, textOf, until } from './clients.js';
import { addService, addUser, everythingEntry, type LiveGateway, startGateway } from './gateway-harness.js';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

/** server-everything started in its streamableHttp mode and registered as a remote service. */
describe('a remote streamable HTTP upstream', () => {
  let gw: LiveGateway;
  let key: string;
  let upstream: ChildProcess;
  const open: McpClient[] = [];

  beforeAll(async () => {
    const port = await freePort();
    upstream = spawn(process.execPath, [everythingEntry, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    upstream.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    await until(() => stderr.includes('listening on port'), 'server-everything to listen');
    gw = await startGateway('sqlite');
    key = (await addUser(gw.ctx, 'alice')).key;
    await addService(gw.ctx, { name: 'remote', type: 'streamableHttp', command: `http://127.0.0.1:${port}/mcp`, args: [] });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close()));
    await gw?.close();
    if (upstream?.pid) process.kill(-upstream.pid, 'SIGKILL');
  });

  it.each([
    ['v1', 'http'],
    ['v2', 'sse'],
  ] as const)('serves SDK %s over %s: tools, progress and resources', async (sdk, wire) => {
    const c = await connect(gw.url, 'remote', key, { sdk, wire });
    open.push(c);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(textOf(await c.callTool('echo', { message: `remote ${sdk}` }))).toBe(`Echo: remote ${sdk}`);
    const progress: Progress[] = [];
    await c.callTool('trigger-long-running-operation', { duration: 0.2, steps: 2 }, { onprogress: (p) => progress.push(p) });
    expectOwnProgress(c, progress, 2);
    const first = (await c.listResources()).resources[0];
    expect((await c.readResource(first?.uri ?? '')).contents[0]?.uri).toBe(first?.uri);
  });
});
