import { createGateway, type Gateway, type GatewayDeps, type GatewayOptions, MemoryWatch, recordRun } from '../gateway/index.js';
import type { Core } from './core.js';
import type { Platform } from './platform.js';

export type GatewayPartDeps = Pick<Core, 'config' | 'lifecycle'> &
  Omit<GatewayDeps, 'config' | 'memory' | 'gate' | 'redis'> &
  Pick<Platform, 'gate' | 'redis'> & { options: GatewayDeps['options'] };

/**
 * The MCP data plane. Processes a killed earlier run left behind go first, and this run is recorded before the
 * pool can start any tool server, `boot` ones included (docs/decisions/0045); the record is released once the
 * gateway has stopped its processes, which is why it is registered before it.
 */
export async function buildGateway(d: GatewayPartDeps, opts?: GatewayOptions): Promise<Gateway> {
  const { config, lifecycle, ...deps } = d;
  const run = await recordRun(config.dataDir, d.logger);
  lifecycle.add({ name: 'run record', close: () => run.release() });
  const gateway = await createGateway({ ...deps, config, memory: new MemoryWatch(config.stdioMaxRssMb) }, opts);
  // The HTTP server stops it first while it closes (build/http-server.ts); this close finds it stopped then.
  lifecycle.add({
    name: 'gateway',
    start: () => gateway.start(),
    close: () => gateway.stop(),
    closeTimeoutMs: config.shutdownGraceMs + 15_000,
  });
  return gateway;
}
