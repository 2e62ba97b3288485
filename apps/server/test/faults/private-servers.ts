import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../built-cli.js';
import { until } from '../gateway/clients.js';

/**
 * Redis and PostgreSQL servers of a fault test's own, on private ports in a temp directory, that the test
 * may kill, stop, freeze and restart (the shared ones on 6379 and 5432 are never touched). Used by the
 * metering fault suites (decision 0043).
 */

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

export interface PrivateRedis {
  url: string;
  /** SIGKILL: what is not persisted is gone. */
  kill(): Promise<void>;
  /** Started again on the same port (and directory: with `persist`, it loads its append-only file). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** `persist`: an append-only file written at every command, so a restart comes back with its data. */
export async function startPrivateRedis(opts: { persist?: boolean } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'toolport-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push(...(opts.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', args, { stdio: 'ignore' });
      await until(() => portOpen(port), 'the private Redis to listen', 10_000);
    },
    async kill() {
      const c = child;
      c?.kill('SIGKILL');
      if (c) await exited(c);
    },
    async close() {
      await redis.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}

const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  const version = readdirSync(root).sort().at(-1);
  return path.join(root, version ?? '15', 'bin');
})();

export interface PrivatePostgres {
  /** The `postgres` database, as the superuser (trust on loopback). */
  url: string;
  /** `pg_ctl stop -m fast|immediate`. */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP to the server and all its backends: connections stay open, nothing answers. */
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

/** A PostgreSQL cluster of its own: `initdb` and `postgres` run as the `postgres` OS user in a temp directory. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const root = mkdtempSync(path.join(tmpdir(), 'toolport-pg-'));
  const data = path.join(root, 'data');
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  chownSync(root, uid, gid);
  const asPostgres = (bin: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args], { stdio: 'ignore', timeout: 60_000 });
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const postmasterPid = () => Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  /** The server and its backends: the postmaster's children by parent pid. */
  const processes = () => {
    const main = postmasterPid();
    const children = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
          // Fields after the parenthesised command: state, ppid, …
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === main;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [main, ...children];
  };
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of processes()) {
      try {
        process.kill(pid, sig);
      } catch {
        // Gone meanwhile.
      }
    }
  };
  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      asPostgres('pg_ctl', [
        'start',
        '-D',
        data,
        '-w',
        '-l',
        path.join(root, 'log'),
        '-o',
        `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`,
      ]);
      await until(() => portOpen(port), 'the private PostgreSQL to listen', 20_000);
    },
    async stop(mode) {
      asPostgres('pg_ctl', ['stop', '-D', data, '-m', mode, '-w']);
    },
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    async close() {
      try {
        pg.thaw();
        await pg.stop('immediate');
      } catch {
        // Already stopped.
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}
