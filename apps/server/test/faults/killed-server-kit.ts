import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { type CliRun, ensureBuiltCli, freePort, runCli, waitUntilReady } from '../built-cli.js';
import { until } from '../gateway/clients.js';

/** One start of the built server: its process, port and base URL. */
export interface StartedServer {
  run: CliRun;
  port: number;
  url: string;
}

/**
 * The pieces the SIGKILL tests share: the built server (`toolport start` on SQLite) started, killed and
 * started again on one DATA_DIR, its API called over HTTP, and what is committed read through a
 * separate read-only connection (SQLite; `env` may name a DATABASE_URL and REDIS_URL instead). `prepare()` in
 * beforeAll, `cleanUp()` in afterAll.
 */
export function killedServerKit(name: string, secrets: { adminPassword: string; secretKey: string }, env: Record<string, string> = {}) {
  let root = '';
  const kit = {
    get dataDir() {
      return path.join(root, 'data');
    },
    async prepare(): Promise<void> {
      await ensureBuiltCli();
      root = mkdtempSync(path.join(tmpdir(), `toolport-${name}-`));
    },
    cleanUp(): void {
      if (root) rmSync(root, { recursive: true, force: true });
    },
    async start(): Promise<StartedServer> {
      const port = await freePort();
      const run = runCli(['start'], {
        DATA_DIR: kit.dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_PASSWORD: secrets.adminPassword,
        SECRET_KEY: secrets.secretKey,
        ...env,
      });
      await waitUntilReady(run, port);
      return { run, port, url: `http://127.0.0.1:${port}` };
    },
    /** The answer's `data`; throws with the status and message on anything but 2xx. */
    async api(url: string, method: string, route: string, token?: string, body?: unknown): Promise<unknown> {
      const res = await fetch(`${url}${route}`, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const json = (await res.json()) as { data?: unknown; message?: string };
      if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${json.message}`);
      return json.data;
    },
    /** root's access token. */
    async login(url: string): Promise<string> {
      const data = await kit.api(url, 'POST', '/api/auth/login', undefined, { username: 'root', password: secrets.adminPassword });
      return (data as { access_token: string }).access_token;
    },
    /** A custom stdio service, once its install task (the first health check) has completed; its id. */
    async addStdioService(url: string, token: string, service: string, command: string): Promise<number> {
      const created = (await kit.api(url, 'POST', '/api/mcp_market/custom_service', token, { name: service, type: 'stdio', command })) as {
        service_id: number;
        task_id?: string;
      };
      if (created.task_id) {
        await until(
          async () =>
            ((await kit.api(url, 'GET', `/api/mcp_market/install_status/${created.task_id}`, token)) as { status: string }).status ===
            'completed',
          'the service to be installed',
        );
      }
      return created.service_id;
    },
    /** Reads what is committed in the SQLite file, through a read-only connection of its own. */
    committed<T>(read: (db: SQLite.Database) => T): T {
      const db = new SQLite(path.join(kit.dataDir, 'toolport.db'), { readonly: true });
      try {
        return read(db);
      } finally {
        db.close();
      }
    },
  };
  return kit;
}
