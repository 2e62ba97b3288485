import { buildApp } from './app.js';
import type { Runtime } from './runtime.js';

/**
 * Time allowed beyond SHUTDOWN_GRACE_MS for the rest of a shutdown: stopping the upstream process
 * groups (SIGTERM, SIGKILL 3 s later) and writing pending counters, records and log lines.
 */
const STOP_MARGIN_MS = 15_000;

/** `toolport start`: serve console, API and proxy until SIGTERM or SIGINT, then stop cleanly. */
export async function startServer(rt: Runtime): Promise<void> {
  const { app, close } = await buildApp({ ...rt, ownsDatabase: true });
  const address = await app.listen({ port: rt.config.port, host: rt.config.host });
  rt.logger.info({ address, database: rt.database.describe, dataDir: rt.config.dataDir }, 'Toolport is listening');
  const bound = app.server.address();
  const port = bound && typeof bound === 'object' ? bound.port : rt.config.port;
  process.stdout.write(`Toolport is ready on http://localhost:${port} (${rt.database.engine})\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    // `npm start` forwards the terminal's Ctrl-C, so one keypress can arrive twice.
    if (stopping) return;
    stopping = true;
    const graceMs = rt.config.shutdownGraceMs;
    rt.logger.info({ signal, graceMs }, 'shutting down: no new connections, waiting for calls in flight');
    // The last resort if something hangs; upstream process groups are killed on exit all the same.
    const force = setTimeout(() => {
      rt.logger.error({ graceMs }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, graceMs + STOP_MARGIN_MS);
    force.unref();
    // No new connections from here on. A connection a client keeps open is closed as soon as nothing
    // is in progress on it (the HTTP part's close, build/http-server.ts); a request that still arrives on
    // one is answered 503 while the app closes.
    app.server.close();
    // The one close path (src/lifecycle.ts, docs/decisions/0062): leadership is given up, the HTTP server refuses
    // new requests and the gateway lets its calls in flight finish (at most graceMs) and stops its processes, then
    // installs, modules, counters, request records, log lines, Redis and last the database close, each once.
    const report = await close();
    if (report.failed.length > 0 || report.timedOut.length > 0) {
      rt.logger.error(report, 'shutdown failed');
      process.exit(1);
    }
    rt.logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
