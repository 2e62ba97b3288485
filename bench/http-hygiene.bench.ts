/**
 * What refusing two Host headers costs every request (issue 24, decision 0041; not part of `npm test`). Run
 * from the repository root:
 *
 *   npx tsx bench/http-hygiene.bench.ts          # BENCH_ROUNDS (default 6) of BENCH_REQUESTS (default 3000)
 *
 * In one process, two Fastify servers on loopback that differ only in `refuseAmbiguousRequests`
 * (apps/server/src/http/hygiene.ts), each answering `GET /ping` with a small JSON body; sequential requests
 * over one keep-alive socket, the two servers taking turns round by round so that load on the machine hits
 * both alike. Prints p50 and p99 per server and the ratio. See docs/performance.md, "HTTP hygiene".
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { refuseAmbiguousRequests } from '../apps/server/src/http/hygiene.js';
import { attachLocale } from '../apps/server/src/http/locale.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);

async function server(withHygiene: boolean): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  app.addHook('onRequest', async (req) => attachLocale(req));
  if (withHygiene) refuseAmbiguousRequests(app);
  app.get('/ping', async () => ({ success: true, data: { pong: true } }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/ping` };
}

function get(url: string, agent: http.Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { accept: 'application/json', 'user-agent': 'bench', 'accept-language': 'en' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
  });
}

async function round(url: string, agent: http.Agent, times: number[]): Promise<void> {
  for (let i = 0; i < REQUESTS; i += 1) {
    const started = performance.now();
    await get(url, agent);
    times.push(performance.now() - started);
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function main(): Promise<void> {
  const targets = { without: await server(false), with: await server(true) };
  const agents = { without: new http.Agent({ keepAlive: true, maxSockets: 1 }), with: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
  const times: Record<'without' | 'with', number[]> = { without: [], with: [] };
  for (const name of ['without', 'with'] as const) await round(targets[name].url, agents[name], []); // warm-up
  for (let r = 0; r < ROUNDS; r += 1) {
    const order = r % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const);
    for (const name of order) await round(targets[name].url, agents[name], times[name]);
  }
  const row = (name: 'without' | 'with') => {
    const sorted = [...times[name]].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  };
  const a = row('without');
  const b = row('with');
  console.log('| server | requests | p50 ms | p99 ms |\n| --- | --- | --- | --- |');
  console.log(`| without the Host check | ${times.without.length} | ${a.p50.toFixed(3)} | ${a.p99.toFixed(3)} |`);
  console.log(`| with the Host check | ${times.with.length} | ${b.p50.toFixed(3)} | ${b.p99.toFixed(3)} |`);
  console.log(`\np50 ratio with/without: ${(b.p50 / a.p50).toFixed(3)}; p99 ratio: ${(b.p99 / a.p99).toFixed(3)}`);
  for (const name of ['without', 'with'] as const) {
    agents[name].destroy();
    await targets[name].app.close();
  }
}

await main();
