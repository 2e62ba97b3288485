/**
 * Memory of one stdio tool server, run as `npx -y <pkg>` (what a custom service did before decision 0035)
 * and as the pinned install the gateway makes now (`node <its bin>`, installed by the same installer code
 * as marketplace installs). For each, the server is started, answers `initialize` and `tools/list`, is
 * left to settle, and the RSS of its whole process tree (the started process and every descendant, read
 * from /proc) is summed. Rounds alternate; the median is printed. Linux only.
 *
 *   npx tsx bench/pinned-rss.ts
 *   BENCH_PACKAGE=@modelcontextprotocol/server-everything@2026.8.31 BENCH_ARGS=stdio BENCH_ROUNDS=5 npx tsx bench/pinned-rss.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { installNpm } from '../apps/server/src/modules/market/installers/npm.js';
import { parseNpmSpec } from '../apps/server/src/modules/market/installers/runner-args.js';

const SPEC = process.env.BENCH_PACKAGE ?? '@modelcontextprotocol/server-memory@2026.8.31';
const ARGS = (process.env.BENCH_ARGS ?? '').split(' ').filter(Boolean);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 3000);
const REGISTRY = process.env.NPM_REGISTRY_URL ?? 'https://registry.npmjs.org/';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** pid → parent pid, command line and RSS (kB) of every live process. */
function processTable(): Map<number, { ppid: number; cmd: string; rssKb: number }> {
  const table = new Map<number, { ppid: number; cmd: string; rssKb: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      table.set(Number(entry), { ppid, cmd, rssKb });
    } catch {
      // Gone while read.
    }
  }
  return table;
}

/** The process and its descendants, with their RSS. */
function tree(root: number): { pid: number; cmd: string; rssKb: number }[] {
  const table = processTable();
  const out: { pid: number; cmd: string; rssKb: number }[] = [];
  const walk = (pid: number) => {
    const self = table.get(pid);
    if (self) out.push({ pid, cmd: self.cmd, rssKb: self.rssKb });
    for (const [child, info] of table) if (info.ppid === pid) walk(child);
  };
  walk(root);
  return out;
}

/** Starts the server, completes initialize and tools/list over stdio, settles, measures, stops it. */
async function measure(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
  let buffer = '';
  const waiting = new Map<number, () => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        const message = JSON.parse(line) as { id?: number };
        if (typeof message.id === 'number') waiting.get(message.id)?.();
      } catch {
        // Not a message.
      }
      nl = buffer.indexOf('\n');
    }
  });
  const ask = (id: number, method: string, params: unknown) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method} timed out`)), 180_000);
      waiting.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const started = Date.now();
  await ask(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  const firstAnswerMs = Date.now() - started;
  child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  await ask(2, 'tools/list', {});
  await sleep(SETTLE_MS);
  const processes = tree(child.pid as number);
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // Already gone.
  }
  await sleep(300);
  return { rssKb: processes.reduce((sum, p) => sum + p.rssKb, 0), processes, firstAnswerMs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const short = (cmd: string) => (cmd.length > 90 ? `${cmd.slice(0, 87)}…` : cmd);

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), 'toolport-pinned-rss-'));
  const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_registry: REGISTRY };
  try {
    // The pinned install, made by the gateway's own installer (decision 0035).
    const dir = path.join(work, 'pinned');
    const installed = await installNpm(
      { kind: 'npm', ...parseNpmSpec(SPEC), entry: '', args: ARGS },
      { dir, registry: REGISTRY, timeoutMs: 600_000, log: () => undefined },
    );
    // A warm npx cache, as a long-running gateway has after the first start.
    await measure('npx', ['-y', SPEC, ...ARGS], work, env);

    const before: Awaited<ReturnType<typeof measure>>[] = [];
    const after: Awaited<ReturnType<typeof measure>>[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      before.push(await measure('npx', ['-y', SPEC, ...ARGS], work, env));
      after.push(await measure(installed.command, installed.args, dir, env));
    }
    const b = median(before.map((r) => r.rssKb));
    const a = median(after.map((r) => r.rssKb));
    console.log(
      `package ${SPEC} (installed ${installed.version}), ${ROUNDS} rounds, settle ${SETTLE_MS} ms, median RSS of the process tree`,
    );
    console.log(
      `before (npx -y):  ${mb(b)} in ${before[0]?.processes.length} processes, first answer ${median(before.map((r) => r.firstAnswerMs))} ms`,
    );
    for (const p of before[0]?.processes ?? []) console.log(`    ${mb(p.rssKb).padStart(9)}  ${short(p.cmd)}`);
    console.log(
      `after (pinned):   ${mb(a)} in ${after[0]?.processes.length} processes, first answer ${median(after.map((r) => r.firstAnswerMs))} ms`,
    );
    for (const p of after[0]?.processes ?? []) console.log(`    ${mb(p.rssKb).padStart(9)}  ${short(p.cmd)}`);
    console.log(`saved per service: ${mb(b - a)} (${((1 - a / b) * 100).toFixed(0)}%)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
