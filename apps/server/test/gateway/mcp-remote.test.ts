import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './clients.js';
import { addService, type LiveGateway, startGateway } from './gateway-harness.js';

/** The real mcp-remote (a pinned devDependency): what the console's Claude Desktop snippet runs through npx. */
const mcpRemote = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../node_modules/mcp-remote/dist/proxy.js');

/** mcp-remote's own placeholder, as in the snippet: it substitutes the environment variable itself. */
const AUTH_HEADER_ARG = ['Authorization:$', '{AUTH_HEADER}'].join('');

interface Recorded {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: string;
}

/**
 * A loopback pass-through in front of the gateway that records every answer it gives: what mcp-remote
 * is told, byte for byte (the Host header passes unchanged, so the gateway names this address).
 */
async function recordingFront(target: string): Promise<{ url: string; seen: Recorded[]; close(): Promise<void> }> {
  const seen: Recorded[] = [];
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (c: Buffer) => {
          chunks.push(c);
          res.write(c);
        });
        answer.on('end', () => {
          seen.push({
            method: req.method ?? '',
            path: req.url ?? '',
            status: answer.statusCode ?? 0,
            contentType: String(answer.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          });
          res.end();
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * mcp-remote (Claude Desktop's bridge) started with a wrong key against a live gateway (issue 16). It
 * used to die on the console's HTML page answering its OAuth probes (`Unexpected token '<'`, and the
 * user saw only "Connection closed"). Now every answer it reads is JSON: the gateway's 401 text on the
 * MCP endpoint, and the gateway's own OAuth metadata, from which mcp-remote offers the gateway's sign-in
 * for exactly that endpoint. (mcp-remote 0.15 treats any 401 as an OAuth challenge and prints the body
 * of none; it waits for the sign-in, so the test stops it once it has offered it.)
 */
describe('mcp-remote with a wrong key', () => {
  let gw: LiveGateway;
  let configDir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    await addService(gw.ctx, { name: 'everything' });
    configDir = mkdtempSync(path.join(tmpdir(), 'toolport-mcp-remote-'));
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await gw?.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  for (const transport of ['http-only', 'sse-only'] as const) {
    it(`reads the gateway's 401 and its OAuth metadata as JSON and offers the gateway's sign-in (${transport})`, async () => {
      const front = await recordingFront(gw.url);
      const endpoint = `${front.url}/proxy/everything/${transport === 'http-only' ? 'mcp' : 'sse'}`;
      const child = spawn(process.execPath, [mcpRemote, endpoint, '--transport', transport, '--allow-http', '--header', AUTH_HEADER_ARG], {
        // As the console's snippet sets it; BROWSER=true: the sign-in page is "opened" by a no-op.
        env: { ...process.env, AUTH_HEADER: 'Bearer not-a-valid-key', MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      children.push(child);
      let output = '';
      let exited: number | null | undefined;
      child.stdout?.on('data', (d: Buffer) => {
        output += d.toString();
      });
      child.stderr?.on('data', (d: Buffer) => {
        output += d.toString();
      });
      child.on('exit', (code) => {
        exited = code;
      });
      // What Claude Desktop sends first.
      child.stdin?.write(
        `${JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-ai', version: '0.1.0' } },
        })}\n`,
      );
      try {
        await until(
          () => output.includes('Please authorize this client by visiting:') || exited !== undefined,
          'mcp-remote to offer the sign-in',
          30_000,
        );
        expect(exited, output).toBeUndefined();
        expect(output).not.toMatch(/Unexpected token|Connection closed|is not valid JSON/);

        // The gateway's sign-in for exactly this endpoint.
        const offered = new URL(output.slice(output.indexOf(`${front.url}/oauth2/authorize?`)).split(/\s/)[0] as string);
        expect(offered.origin + offered.pathname).toBe(`${front.url}/oauth2/authorize`);
        expect(offered.searchParams.get('resource')).toBe(endpoint);

        // What mcp-remote was told: the gateway's 401 text on the MCP endpoint, and JSON for every probe.
        const refused = front.seen.filter((r) => r.path.startsWith('/proxy/everything/'));
        expect(refused.length).toBeGreaterThan(0);
        for (const r of refused) {
          expect(r.status, `${r.method} ${r.path}`).toBe(401);
          expect(r.contentType).toMatch(/^application\/json/);
          expect(JSON.parse(r.body).error.message).toBe(
            'Unauthorized: a valid API key or OAuth access token is required (Authorization: Bearer <key> or ?key=<key>)',
          );
        }
        const probes = front.seen.filter((r) => r.path.startsWith('/.well-known/'));
        expect(probes.some((r) => r.status === 200)).toBe(true);
        for (const r of probes) expect(r.contentType, `${r.path}`).toMatch(/^application\/json/);
      } finally {
        child.kill('SIGKILL');
        await front.close();
      }
    });
  }
});
