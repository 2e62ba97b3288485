import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/db.js';
import { createLogger } from '../src/infra/logger.js';
import { ADMIN_PASSWORD } from './harness.js';

/**
 * The HTTP server's close when a client keeps its connection open (every MCP client's fetch does): Node's
 * server.close() closes the connections idle at that moment only, so one whose request ends a moment later
 * would hold the close for the keep-alive time (72 s). The close path must close it as soon as it is idle,
 * whether `toolport start` stops on SIGTERM or `app.close()` is called (tests, benchmarks).
 */
describe('closing the HTTP server with a kept-open connection', () => {
  let dataDir: string | undefined;
  afterEach(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('closes a connection whose request ended after the close began, without waiting for its keep-alive time', {
    timeout: 30_000,
  }, async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-close-'));
    const config = loadConfig({
      DATA_DIR: dataDir,
      ADMIN_PASSWORD,
      LOG_LEVEL: 'silent',
      SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
    });
    const database = openDatabase(config);
    const built = await buildApp({ config, database, logger: createLogger(config.logLevel), print: () => undefined });
    const { app } = built;
    let entered!: () => void;
    const arrived = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A request the gateway does not drain: it is answered just after Fastify has called server.close().
    app.get('/test/held', async () => {
      entered();
      await held;
      return { ok: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const server = app.server;
    const closeServer = server.close.bind(server);
    server.close = ((callback?: (err?: Error) => void) => {
      const result = closeServer(callback);
      release();
      return result;
    }) as typeof server.close;
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no TCP port');

    const agent = new http.Agent({ keepAlive: true });
    let socketGone!: () => void;
    const closedByServer = new Promise<void>((resolve) => {
      socketGone = resolve;
    });
    const answer = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: address.port, path: '/test/held', agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      });
      req.on('socket', (socket) => socket.once('close', () => socketGone()));
      req.on('error', reject);
    });
    await arrived;
    // Without the sweep this close waits 72 s for the idle connection, past the test's time-out.
    await app.close();
    await database.db.destroy();
    const answered = await answer;
    // The request was answered in full on a connection that stayed keep-alive, and the server closed it afterwards
    // (the client still holds it in its pool: only the server can have closed it).
    expect(answered).toEqual({ status: 200, connection: 'keep-alive', body: '{"ok":true}' });
    await closedByServer;
    agent.destroy();
  });
});
