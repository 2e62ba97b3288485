/**
 * The OpenAPI face against /proxy (decision 0053); not part of `npm test`. From the repository root:
 *
 *   npx tsx bench/openapi-face.bench.ts
 *   BENCH_SEQUENTIAL=20 BENCH_ROUNDS=1 npx tsx bench/openapi-face.bench.ts   # a quick check that it runs
 *
 * Against one gateway (bench/gateway-target.ts: the real app, server-everything as a shared stdio service):
 * sequential `echo` calls over one keep-alive connection, interleaved call by call between a 2025-era MCP session
 * on `/proxy/everything/mcp` (initialize once, then each POST with its Mcp-Session-Id) and the same call on
 * `POST /openapi/proxy/everything/echo` (a JSON body of arguments, a JSON answer). Every answer is checked.
 * The report gives each kind's p50, p99 and calls per second per round (BENCH_ROUNDS, default 3) with the round's
 * ratio, the median over the rounds, and the OpenAPI face's p50 over /proxy's: the median of the rounds' ratios
 * (each round's two kinds ran interleaved, so its ratio is paired) with their spread (lowest–highest). See
 * docs/performance.md.
 */

import http from 'node:http';
import { loadavg } from 'node:os';
import { openLeanSession } from './lean-client.js';
import { pinSelf, startGateway } from './targets.js';

const CALLS = Number(process.env.BENCH_SEQUENTIAL ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = Math.min(300, CALLS);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

interface Timing {
  p50: number;
  p99: number;
  perSecond: number;
}

const summary = (times: number[]): Timing => {
  const sorted = [...times].sort((a, b) => a - b);
  const total = times.reduce((a, b) => a + b, 0);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), perSecond: (times.length / total) * 1000 };
};

/**
 * One round: `n` pairs of calls, one of each kind, the order within a pair alternating, each call timed
 * alone. Interleaved call by call, so that neither kind runs on a warmer or quieter machine than the other.
 */
async function interleaved(n: number, a: (i: number) => Promise<void>, b: (i: number) => Promise<void>): Promise<[Timing, Timing]> {
  for (let i = 0; i < WARMUP; i++) {
    await a(-i - 1);
    await b(-i - 1);
  }
  const ta: number[] = [];
  const tb: number[] = [];
  const one = async (f: (i: number) => Promise<void>, i: number, into: number[]) => {
    const t = performance.now();
    await f(i);
    into.push(performance.now() - t);
  };
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      await one(a, i, ta);
      await one(b, i, tb);
    } else {
      await one(b, i, tb);
      await one(a, i, ta);
    }
  }
  return [summary(ta), summary(tb)];
}

/** One call on the OpenAPI face: the arguments as the body, the tool's text as the JSON answer. */
function openApiCall(agent: http.Agent, url: URL, key: string, message: string): Promise<void> {
  const body = JSON.stringify({ message });
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () =>
          res.statusCode === 200 && JSON.parse(text) === `Echo: ${message}`
            ? resolve()
            : reject(new Error(`unexpected answer: ${res.statusCode} ${text.slice(0, 200)}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const ms = (x: number) => `${x.toFixed(3)} ms`;

async function main(): Promise<void> {
  pinSelf();
  const loadAtStart = loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  const gateway = await startGateway(undefined);
  const key = gateway.keys[0] as string;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const proxy: Timing[] = [];
  const openapi: Timing[] = [];
  try {
    const session = await openLeanSession(`${gateway.url}/proxy/everything/mcp`, key, agent);
    const face = new URL(`${gateway.url}/openapi/proxy/everything/echo`);
    for (let round = 0; round < ROUNDS; round++) {
      const [p, o] = await interleaved(
        CALLS,
        async (i) => {
          if ((await session.call(`p${round}-${i}`)) !== 'ok') throw new Error('proxy call failed');
        },
        (i) => openApiCall(agent, face, key, `o${round}-${i}`),
      );
      proxy.push(p);
      openapi.push(o);
      console.log(
        `round ${round + 1}/${ROUNDS}: /proxy p50 ${ms(p.p50)} p99 ${ms(p.p99)} ${p.perSecond.toFixed(0)}/s; ` +
          `/openapi p50 ${ms(o.p50)} p99 ${ms(o.p99)} ${o.perSecond.toFixed(0)}/s; ratio ${(o.p50 / p.p50).toFixed(2)}`,
      );
    }
    await session.close();
  } finally {
    agent.destroy();
    await gateway.stop();
  }
  const p50 = { proxy: median(proxy.map((t) => t.p50)), openapi: median(openapi.map((t) => t.p50)) };
  const rate = { proxy: median(proxy.map((t) => t.perSecond)), openapi: median(openapi.map((t) => t.perSecond)) };
  console.log(
    `\n${CALLS} sequential echo calls per kind and round, ${ROUNDS} rounds, load ${loadAtStart} at the start, ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} at the end`,
  );
  console.log(
    `median p50: /proxy ${ms(p50.proxy)} (${rate.proxy.toFixed(0)}/s), /openapi ${ms(p50.openapi)} (${rate.openapi.toFixed(0)}/s)`,
  );
  // Each round's two kinds ran interleaved on the same machine: its ratio is the paired figure, their median the result.
  const ratios = proxy.map((p, i) => (openapi[i]?.p50 ?? Number.NaN) / p.p50);
  console.log(
    `OpenAPI face / proxy p50, median of the rounds' ratios: ${median(ratios).toFixed(2)} ` +
      `(rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}; ratio of the medians ${(p50.openapi / p50.proxy).toFixed(2)})`,
  );
  // Under load the ratio shrinks as both p50s grow; the face's extra time per call moves less.
  const extra = proxy.map((p, i) => (openapi[i]?.p50 ?? Number.NaN) - p.p50);
  console.log(
    `OpenAPI face's extra p50 per call: median ${ms(median(extra))} (rounds ${ms(Math.min(...extra))}–${ms(Math.max(...extra))})`,
  );
}

await main();
