import { LinkPool, type PoolDeps } from './pool.js';
import { defaultTuning, type UpstreamTuning } from './types.js';

export type { PoolDeps } from './pool.js';
export { LinkPool } from './pool.js';
export type { UpstreamTuning } from './types.js';

/**
 * The upstream side of the gateway (docs/architecture.md §3, §4): stdio processes and remote connections,
 * the multiplexer on each, crash restarts, the startup strategy and health checks. `deps` comes
 * from the gateway's own (gateway/index.ts). Starting the `boot` services begins at once; `pool.ready` settles
 * when they have been started.
 */
export function createUpstreamPool(deps: PoolDeps, tuning: Partial<UpstreamTuning> = {}): LinkPool {
  return new LinkPool(deps, { ...defaultTuning, ...tuning });
}
