/**
 * The gateway under test, run as its own process (pinned to a core by the benchmark): the real
 * app on a fresh SQLite data directory with twenty users and server-everything installed as a stdio
 * service. Talks to the benchmark over IPC: sends `{ready, url, keys}`, answers `memory` requests
 * with the process memory after a full garbage collection.
 *
 * Run by gateway.bench.ts as `node --expose-gc --import tsx bench/gateway-target.ts`.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { startBenchApp } from './bench-app.js';

const require = createRequire(import.meta.url);
const everything = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js');

const bench = await startBenchApp({ prefix: 'toolport-bench-', logLevel: 'info' });
const { app, ctx } = bench;

// Several users: one user may hold at most 100 sessions per replica, and the idle-session step opens 1,000.
const keys: string[] = [];
for (let i = 0; i < 20; i += 1) keys.push(await bench.addUser(`bench${i}`));
await bench.addStdioService('everything', [everything, 'stdio']);
// BENCH_V2_FIXTURE=<path>: also `v2`, a server on the v2 SDK that speaks both eras (bench/modern.bench.ts).
if (process.env.BENCH_V2_FIXTURE) await bench.addStdioService('v2', [process.env.BENCH_V2_FIXTURE]);

const url = await bench.listen(Number(process.env.PORT ?? 0));
const port = Number(new URL(url).port);

// BENCH_CREDENTIALS=oauth: each user signs in through the OAuth server (bench/oauth.bench.ts), and the
// benchmark gets their access tokens instead of their API keys.
if (process.env.BENCH_CREDENTIALS === 'oauth') {
  const { oauthTokens } = await import('./oauth-tokens.js');
  const tokens = await oauthTokens(app, ctx, `http://127.0.0.1:${port}`, 'everything');
  keys.splice(0, keys.length, ...tokens);
}

const gc = (globalThis as { gc?: () => void }).gc;
/** Memory after garbage collection has settled: several full collections, a pause between them. */
async function settledMemory() {
  for (let i = 0; i < 3; i += 1) {
    gc?.();
    await new Promise((r) => setTimeout(r, 200));
  }
  const m = process.memoryUsage();
  return { type: 'memory', rss: m.rss, heapUsed: m.heapUsed, external: m.external, sessions: ctx.gateway.stats().sessions };
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'memory') void settledMemory().then((m) => process.send?.(m));
  if (message.type === 'stop') {
    void bench.close().then(() => process.exit(0));
  }
});
process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}`, keys });
