/**
 * Gateway benchmark (issue 3, "Performance"); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/gateway.bench.ts            # full run, prints a Markdown report
 *   BENCH_SECONDS=3 npx tsx bench/gateway.bench.ts
 *
 * In one run, on loopback: an SDK client talking to server-everything directly over stdio; the same
 * client through Toolport's gateway over streamable HTTP; supergateway 4 (stateful streamable HTTP
 * in front of the same server) as a peer baseline; and a bare HTTP-to-stdio relay as the floor of any
 * such hop. The load generator is pinned to core 0, each target (and the server-everything processes
 * it starts) to core 1. See docs/performance.md.
 */
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type LeanSession, openLeanSession, openLeanStdio } from './lean-client.js';
import {
  everythingEntry,
  hasTaskset,
  pinned,
  pinSelf,
  startFloorRelay,
  startGateway,
  startSupergateway,
  supergatewayEntry,
  treeRss,
} from './targets.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SEQUENTIAL_CALLS = Number(process.env.BENCH_SEQUENTIAL ?? 3000);
const WARMUP_CALLS = 500;
const CONCURRENCY = [1, 10, 50];
const IDLE_SESSIONS = Number(process.env.BENCH_IDLE_SESSIONS ?? 1000);

interface Latency {
  p50: number;
  p99: number;
}
interface Throughput {
  sessions: number;
  callsPerSecond: number;
  errors: number;
  mismatches: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/** Sequential echo calls: milliseconds per call at p50 and p99. */
async function sequential(call: (message: string) => Promise<'ok' | 'mismatch'>): Promise<Latency> {
  for (let i = 0; i < WARMUP_CALLS; i += 1) await call(`warm ${i}`);
  const times: number[] = [];
  for (let i = 0; i < SEQUENTIAL_CALLS; i += 1) {
    const started = performance.now();
    const outcome = await call(`seq ${i}`);
    times.push(performance.now() - started);
    if (outcome !== 'ok') throw new Error(`mismatched answer to call ${i}`);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

const sdkCall = (client: Client) => async (message: string) => {
  const result = await client.callTool({ name: 'echo', arguments: { message } });
  return (result.content as { text?: string }[])[0]?.text === `Echo: ${message}` ? 'ok' : 'mismatch';
};

/** The lean client over one keep-alive socket, sequentially. */
async function leanSequential(endpoint: string, key: string | undefined): Promise<Latency> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const session = await openLeanSession(endpoint, key, agent);
  const latency = await sequential((m) => session.call(m));
  await session.close();
  agent.destroy();
  return latency;
}

/** Closed-loop load: each session makes one call after another for SECONDS; total calls per second. */
async function load(sessions: LeanSession[]): Promise<Omit<Throughput, 'sessions'>> {
  let calls = 0;
  let errors = 0;
  let mismatches = 0;
  const warmupEnd = Date.now() + 500;
  let started = 0;
  let end = 0;
  await Promise.all(
    sessions.map(async (s, n) => {
      for (let i = 0; ; i += 1) {
        const now = Date.now();
        if (end !== 0 && now >= end) return;
        if (end === 0 && now >= warmupEnd) {
          started = now;
          end = now + SECONDS * 1000;
        }
        try {
          const outcome = await s.call(`s${n}-c${i}`);
          if (end !== 0) {
            calls += 1;
            if (outcome === 'mismatch') mismatches += 1;
          }
        } catch {
          if (end !== 0) errors += 1;
        }
      }
    }),
  );
  return { callsPerSecond: calls / ((end - started) / 1000), errors, mismatches };
}

/** `keys`: API keys handed out round-robin to the sessions (none for supergateway). */
async function throughput(endpoint: string, keys: (string | undefined)[]): Promise<Throughput[]> {
  const out: Throughput[] = [];
  for (const n of CONCURRENCY) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: n });
    const sessions = await Promise.all(Array.from({ length: n }, (_, i) => openLeanSession(endpoint, keys[i % keys.length], agent)));
    out.push({ sessions: n, ...(await load(sessions)) });
    await Promise.all(sessions.map((s) => s.close()));
    agent.destroy();
  }
  return out;
}

async function sdkOverHttp(url: string, key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  // The 1.x transport hands one shared AbortSignal to every fetch; undici then piles up a listener per
  // request on it (docs/protocol.md). Each request goes without it here, for every target alike.
  const fetchEach: typeof fetch = (input, init) => fetch(input, { ...init, signal: null });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: fetchEach }));
  return client;
}

const mb = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
const ms = (v: number) => v.toFixed(3);
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;

async function main(): Promise<void> {
  pinSelf();
  const report: string[] = [];
  const log = (line: string) => process.stderr.write(`${line}\n`);

  log('direct stdio …');
  const [command, args] = pinned(process.execPath, [everythingEntry, 'stdio']);
  const direct = new Client({ name: 'bench', version: '1' });
  await direct.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  const directLatency = await sequential(sdkCall(direct));
  await direct.close();
  const leanDirect = await openLeanStdio(command, args);
  const directLean = await sequential((m) => leanDirect.call(m));
  await leanDirect.close();

  log('bare relay …');
  const relay = await startFloorRelay();
  const floorLean = await leanSequential(relay.url, undefined);
  await relay.stop();

  log('toolport gateway …');
  const gateway = await startGateway();
  const gatewayEndpoint = `${gateway.url}/proxy/everything/mcp`;
  const sdk = await sdkOverHttp(gatewayEndpoint, gateway.keys[0]);
  const gatewayLatency = await sequential(sdkCall(sdk));
  await sdk.close();
  const gatewayLean = await leanSequential(gatewayEndpoint, gateway.keys[1]);
  const gatewayLoad = await throughput(gatewayEndpoint, gateway.keys);

  log(`${IDLE_SESSIONS} idle sessions …`);
  const before = await gateway.memory();
  const idleAgent = new http.Agent({ keepAlive: true, maxSockets: 20 });
  const idle: LeanSession[] = [];
  for (let i = 0; i < IDLE_SESSIONS; i += 20) {
    const batch = Array.from({ length: Math.min(20, IDLE_SESSIONS - i) }, (_, j) =>
      openLeanSession(gatewayEndpoint, gateway.keys[j], idleAgent),
    );
    idle.push(...(await Promise.all(batch)));
  }
  const after = await gateway.memory();
  idleAgent.destroy();
  await gateway.stop();

  let peer: { latency: Latency; lean: Latency; load: Throughput[]; perSessionRss: number } | undefined;
  const entry = supergatewayEntry();
  if (entry) {
    log('supergateway …');
    const sg = await startSupergateway(entry);
    const sgClient = await sdkOverHttp(sg.url, undefined);
    const latency = await sequential(sdkCall(sgClient));
    await sgClient.close();
    const lean = await leanSequential(sg.url, undefined);
    const rssBefore = treeRss(sg.pid);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    const ten = await Promise.all(Array.from({ length: 10 }, () => openLeanSession(sg.url, undefined, agent)));
    await Promise.all(ten.map((s) => s.call('warm')));
    const perSessionRss = (treeRss(sg.pid) - rssBefore) / 10;
    await Promise.all(ten.map((s) => s.close()));
    agent.destroy();
    const sgLoad = await throughput(sg.url, [undefined]);
    await sg.stop();
    peer = { latency, lean, load: sgLoad, perSessionRss };
  }

  report.push(
    `Run: ${new Date().toISOString()}, Node ${process.version}, ${hasTaskset ? 'load generator on core 0, targets on core 1' : 'no taskset: unpinned'}, ${SECONDS} s per load step.`,
  );
  report.push('');
  report.push(row(['Sequential echo', 'SDK client p50 ms', 'p99 ms', 'lean client p50 ms', 'p99 ms']));
  report.push(row(['---', '---:', '---:', '---:', '---:']));
  const latencyRow = (name: string, sdkLatency: Latency, leanLatency: Latency) =>
    row([name, ms(sdkLatency.p50), ms(sdkLatency.p99), ms(leanLatency.p50), ms(leanLatency.p99)]);
  report.push(latencyRow('direct stdio', directLatency, directLean));
  report.push(latencyRow('Toolport gateway (streamable HTTP)', gatewayLatency, gatewayLean));
  if (peer) report.push(latencyRow('supergateway 4 (streamable HTTP, stateful)', peer.latency, peer.lean));
  report.push(row(['bare HTTP-to-stdio relay (floor, bench/floor-relay.ts)', '', '', ms(floorLean.p50), ms(floorLean.p99)]));
  report.push('');
  report.push(
    row([
      'Concurrent sessions',
      'Toolport calls/s',
      'errors',
      'mismatches',
      ...(peer ? ['supergateway calls/s', 'errors', 'mismatches', 'ratio'] : []),
    ]),
  );
  report.push(row(['---:', '---:', '---:', '---:', ...(peer ? ['---:', '---:', '---:', '---:'] : [])]));
  for (const g of gatewayLoad) {
    const p = peer?.load.find((x) => x.sessions === g.sessions);
    const cells: (string | number)[] = [g.sessions, Math.round(g.callsPerSecond), g.errors, g.mismatches];
    if (p) cells.push(Math.round(p.callsPerSecond), p.errors, p.mismatches, `${(g.callsPerSecond / p.callsPerSecond).toFixed(2)}x`);
    report.push(row(cells));
  }
  report.push('');
  report.push(
    `Gateway memory with ${after.sessions} idle sessions on one shared process: RSS ${mb(before.rss)} -> ${mb(after.rss)} MB (+${mb(after.rss - before.rss)} MB), heap ${mb(before.heapUsed)} -> ${mb(after.heapUsed)} MB (+${mb(after.heapUsed - before.heapUsed)} MB), after a full GC.`,
  );
  if (peer)
    report.push(
      `supergateway: about ${mb(peer.perSessionRss)} MB of RSS per open session (a server process each, measured over 10 sessions).`,
    );
  process.stdout.write(`${report.join('\n')}\n`);
}

await main();
process.exit(0);
