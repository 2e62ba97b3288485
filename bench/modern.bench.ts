/**
 * The 2026-07-28 era on the call path (decisions 0031 and 0039); not part of `npm test`. From the repository root:
 *
 *   npx tsx bench/modern.bench.ts
 *   BENCH_BEFORE=<commit> npx tsx bench/modern.bench.ts   # this tree against the gateway at <commit>, same run
 *
 * Against one gateway (bench/gateway-target.ts: the real app, server-everything as a shared stdio service, and
 * `v2`, the v2-SDK fixture that speaks both eras): sequential `echo` calls over keep-alive HTTP of a 2025-era
 * session (initialize once, then each POST with its Mcp-Session-Id) and of a 2026-07-28 client (every POST
 * stateless, with the `_meta` envelope and the standard headers) to server-everything (a legacy-only upstream:
 * the gateway translates) and to `v2` (reached in its own era since decision 0039); and the cost of the era check
 * every POST passes (`classify`), measured alone. With BENCH_BEFORE, both gateways are started and measured in
 * alternating rounds (BENCH_ROUNDS, default 3), and the report gives the median of each and after/before.
 * See docs/performance.md.
 */

import type { IncomingMessage } from 'node:http';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { classify } from '../apps/server/src/gateway/downstream/modern-wire.js';
import { openLeanSession } from './lean-client.js';
import { beforeTree, pinSelf, startGateway } from './targets.js';

const CALLS = Number(process.env.BENCH_SEQUENTIAL ?? 2000);
const BEFORE = process.env.BENCH_BEFORE ?? '';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const V2_FIXTURE = path.resolve(import.meta.dirname, '../apps/server/test/fixtures/modern-server.mjs');
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
        res.on('end', () =>
          text.toLowerCase().includes(`echo: m${id}`) ? resolve() : reject(new Error(`unexpected answer: ${text.slice(0, 200)}`)),
        );
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

interface Figures {
  legacy: number;
  modern: number;
  modernV2: number;
  legacyPerSecond: number;
  modernPerSecond: number;
  modernV2PerSecond: number;
}

/** One gateway, measured: p50 in ms and calls per second of each kind of client. */
async function measure(script: string | undefined): Promise<Figures> {
  const gateway = await startGateway(script, { BENCH_V2_FIXTURE: V2_FIXTURE });
  const key = gateway.keys[0] as string;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const everything = `${gateway.url}/proxy/everything/mcp`;
    const session = await openLeanSession(everything, key, agent);
    const legacy = await timed(CALLS, async (i) => {
      if ((await session.call(`x${i}`)) !== 'ok') throw new Error('legacy call failed');
    });
    await session.close();
    const modern = await timed(CALLS, (i) => modernPost(agent, new URL(everything), key, i + 1));
    const v2 = new URL(`${gateway.url}/proxy/v2/mcp`);
    const modernV2 = await timed(CALLS, (i) => modernPost(agent, v2, key, i + 1));
    return {
      legacy: legacy.p50,
      modern: modern.p50,
      modernV2: modernV2.p50,
      legacyPerSecond: legacy.perSecond,
      modernPerSecond: modern.perSecond,
      modernV2PerSecond: modernV2.perSecond,
    };
  } finally {
    agent.destroy();
    await gateway.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

async function main(): Promise<void> {
  pinSelf();
  const loadAtStart = load();
  const rows: [string, keyof Figures][] = [
    ['2025-11-25 session → server-everything, p50 ms', 'legacy'],
    ['2026-07-28 stateless → server-everything (translated), p50 ms', 'modern'],
    ['2026-07-28 stateless → v2 fixture, p50 ms', 'modernV2'],
    ['2025-11-25 session → server-everything, calls/s', 'legacyPerSecond'],
    ['2026-07-28 stateless → server-everything, calls/s', 'modernPerSecond'],
    ['2026-07-28 stateless → v2 fixture, calls/s', 'modernV2PerSecond'],
  ];
  if (!BEFORE) {
    const after = await measure(undefined);
    console.log('| measure | this tree |\n| --- | ---: |');
    for (const [label, k] of rows) console.log(`| ${label} | ${after[k].toFixed(k.endsWith('PerSecond') ? 0 : 3)} |`);
  } else {
    const script = beforeTree(BEFORE, 'modern');
    const before: Figures[] = [];
    const after: Figures[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      before.push(await measure(script));
      after.push(await measure(undefined));
      console.log(`round ${round + 1}: before ${JSON.stringify(before.at(-1))} after ${JSON.stringify(after.at(-1))}`);
    }
    console.log(
      `\nMedian of ${ROUNDS} alternating rounds, ${CALLS} sequential calls each; load average ${loadAtStart} at the start, ${load()} at the end:\n`,
    );
    console.log(`| measure | before (${BEFORE}) | after | after / before |\n| --- | ---: | ---: | ---: |`);
    for (const [label, k] of rows) {
      const b = median(before.map((f) => f[k]));
      const a = median(after.map((f) => f[k]));
      const digits = k.endsWith('PerSecond') ? 0 : 3;
      console.log(`| ${label} | ${b.toFixed(digits)} | ${a.toFixed(digits)} | ${(a / b).toFixed(3)} |`);
    }
  }
  console.log(`\nEra check per POST (classify, legacy request with a session id): ${classifyCost().toFixed(0)} ns`);
}

await main();
