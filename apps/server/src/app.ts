import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildCore } from './build/core.js';
import { buildHttpServer, type RouteTable } from './build/http-server.js';
import { buildPlatform } from './build/platform.js';
import { buildServerParts, type ServerParts } from './build/server-parts.js';
import type { Config } from './config.js';
import type { DbHandle } from './db/db.js';
import type { GatewayOptions } from './gateway/index.js';
import type { CloseReport } from './lifecycle.js';

export type App = FastifyInstance;

export interface BuildOptions {
  config: Config;
  database: DbHandle;
  logger: Logger;
  /** The lifecycle destroys the database as its last close (`toolport start`); tests that opened it close it themselves. */
  ownsDatabase?: boolean;
  /** Where bootstrap prints the generated admin password (stdout by default). */
  print?: (line: string) => void;
  /** Session limits and upstream timings of the gateway; production runs on their defaults, tests shorten them. */
  gateway?: GatewayOptions;
}

/** Every part of the server, built once by `buildApp` (tests read them). */
export type AppParts = ServerParts;

export interface BuiltApp {
  app: FastifyInstance;
  ctx: AppParts;
  /** Every route registered, for the route-table tests; `endpoint` when it came from the contract's endpoint table. */
  routes: RouteTable;
  /**
   * The one close path (src/lifecycle.ts): every part in reverse build order, each once. The HTTP server goes
   * first (new requests refused, the gateway's calls in flight finish within SHUTDOWN_GRACE_MS, Fastify closes),
   * the database last when the app owns it.
   */
  close(): Promise<CloseReport>;
  /** The parts registered on the lifecycle, in build order (they close in the reverse). */
  parts(): string[];
  /** The part whose close is running now, if any. */
  closingPart(): string | undefined;
}

/**
 * The composition root (docs/decisions/0062-one-lifecycle.md): the core every command shares (build/core.ts),
 * the server's platform (build/platform.ts), its modules and gateway (build/server-parts.ts) and the HTTP
 * server (build/http-server.ts), each part registered on one lifecycle, which is then started. Nothing listens
 * (server.ts does; tests use `app.inject()`). A build or start that fails closes what was built.
 */
export async function buildApp(opts: BuildOptions): Promise<BuiltApp> {
  const core = await buildCore({ ...opts, closeTimeoutMs: 15_000 });
  const { lifecycle } = core;
  try {
    const platform = await buildPlatform(core);
    const { parts, modules } = await buildServerParts(core, platform, opts);
    const { app, routes } = await buildHttpServer(parts, modules, platform.gate, lifecycle);
    // Registered last so that it closes first: another replica takes the periodic jobs over while this one drains.
    lifecycle.add({ name: 'leadership', close: () => platform.leader.close() });
    await lifecycle.start();
    return {
      app,
      ctx: parts,
      routes,
      close: () => lifecycle.close(),
      parts: () => lifecycle.names,
      closingPart: () => lifecycle.closingPart,
    };
  } catch (err) {
    await lifecycle.close();
    throw err;
  }
}
