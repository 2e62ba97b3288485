/**
 * The proxy's authentication path (issue 18; not part of `npm test`): the same gateway target, calls
 * made with API keys and then with OAuth access tokens. Run from the repository root:
 *
 *   npx tsx bench/oauth.bench.ts                  # BENCH_SECONDS, BENCH_SEQUENTIAL as in gateway.bench.ts
 *   BENCH_CREDENTIALS=key npx tsx bench/oauth.bench.ts   # API keys only (to compare with an older checkout)
 *
 * Prints p50/p99 of sequential echo calls over one keep-alive socket and calls per second with 10
 * sessions. See docs/performance.md, "OAuth access tokens on the proxy".
 */
import http from 'node:http';
import { openLeanSession } from './lean-client.js';
import { pinSelf, startGateway } from './targets.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 3000);
const SESSIONS = 10;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function measure(credentials: 'key' | 'oauth') {
  process.env.BENCH_CREDENTIALS = credentials;
  const target = await startGateway();
  const endpoint = `${target.url}/proxy/everything/mcp`;
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const one = await openLeanSession(endpoint, target.keys[0], agent);
    for (let i = 0; i < 500; i += 1) await one.call(`warm ${i}`);
    const times: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i += 1) {
      const started = performance.now();
      if ((await one.call(`seq ${i}`)) !== 'ok') throw new Error('mismatched answer');
      times.push(performance.now() - started);
    }
    await one.close();
    agent.destroy();
    times.sort((a, b) => a - b);

    const pool = new http.Agent({ keepAlive: true, maxSockets: SESSIONS });
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, (_, i) => openLeanSession(endpoint, target.keys[i % target.keys.length], pool)),
    );
    let calls = 0;
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(
      sessions.map(async (s, n) => {
        for (let i = 0; Date.now() < end; i += 1) if ((await s.call(`s${n}-${i}`)) === 'ok') calls += 1;
      }),
    );
    await Promise.all(sessions.map((s) => s.close()));
    pool.destroy();
    return { credentials, p50: percentile(times, 50), p99: percentile(times, 99), callsPerSecond: calls / SECONDS };
  } finally {
    await target.stop();
  }
}

pinSelf();
const which = process.env.BENCH_CREDENTIALS;
const kinds: ('key' | 'oauth')[] = which === 'key' || which === 'oauth' ? [which] : ['key', 'oauth'];
const rows = [];
for (const c of kinds) rows.push(await measure(c));
console.log('| credentials | p50 ms | p99 ms | calls/s (10 sessions) |\n|---|---|---|---|');
for (const r of rows) console.log(`| ${r.credentials} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${Math.round(r.callsPerSecond)} |`);
