/**
 * The 2026-07-28 era on the call path (decision 0031); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/modern.bench.ts
 *
 * In one run, against one gateway (bench/gateway-target.ts: the real app, server-everything as a shared
 * stdio service): sequential `echo` calls of a 2025-era session (initialize once, then each POST with its
 * Mcp-Session-Id) and of a 2026-07-28 client (every POST stateless, with the `_meta` envelope and the
 * standard headers), over keep-alive HTTP; and the cost of the era check every POST now passes
 * (`classify`), measured alone. See docs/performance.md.
 */

import type { IncomingMessage } from 'node:http';
import http from 'node:http';
import { classify } from '../apps/server/src/gateway/downstream/modern-wire.js';
import { openLeanSession } from './lean-client.js';
import { pinSelf, startGateway } from './targets.js';

const CALLS = Number(process.env.BENCH_SEQUENTIAL ?? 2000);
const WARMUP = 300;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function timed(n: number, one: (i: number) => Promise<void>): Promise<{ p50: number; p99: number; perSecond: number }> {
  for (let i = 0; i < WARMUP; i++) await one(i);
  const times: number[] = [];
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await one(i);
    times.push(performance.now() - t);
  }
  const total = performance.now() - start;
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), perSecond: (n / total) * 1000 };
}

function modernPost(agent: http.Agent, endpoint: URL, key: string, id: number): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'echo',
      arguments: { message: `m${id}` },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      },
    },
  });
  return new Promise((resolve, reject) => {
    const req = http.request(
      endpoint,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'echo',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => (text.includes(`Echo: m${id}`) ? resolve() : reject(new Error(`unexpected answer: ${text.slice(0, 200)}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function classifyCost(): number {
  const req = {
    headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 'x'.repeat(120), accept: 'application/json, text/event-stream' },
  } as unknown as IncomingMessage;
  const messages = [{ jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }];
  const n = 1_000_000;
  for (let i = 0; i < 100_000; i++) classify(req, messages, false);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) classify(req, messages, false);
  return Number(process.hrtime.bigint() - start) / n;
}

async function main(): Promise<void> {
  pinSelf();
  const gateway = await startGateway();
  const endpoint = `${gateway.url}/proxy/everything/mcp`;
  const key = gateway.keys[0] as string;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const session = await openLeanSession(endpoint, key, agent);

    const legacy = await timed(CALLS, async (i) => {
      if ((await session.call(`x${i}`)) !== 'ok') throw new Error('legacy call failed');
    });
    const url = new URL(endpoint);
    const modern = await timed(CALLS, (i) => modernPost(agent, url, key, i + 1));
    await session.close();
    const ns = classifyCost();
    console.log(`| Client | p50 ms | p99 ms | calls/s |\n| --- | --- | --- | --- |`);
    console.log(`| 2025-11-25 session | ${legacy.p50.toFixed(2)} | ${legacy.p99.toFixed(2)} | ${legacy.perSecond.toFixed(0)} |`);
    console.log(`| 2026-07-28 stateless | ${modern.p50.toFixed(2)} | ${modern.p99.toFixed(2)} | ${modern.perSecond.toFixed(0)} |`);
    console.log(`\nEra check per POST (classify, legacy request with a session id): ${ns.toFixed(0)} ns`);
  } finally {
    agent.destroy();
    await gateway.stop();
  }
}

await main();
