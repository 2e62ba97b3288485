import path from 'node:path';
import { resolveInstallDir } from '../../infra/install-dir.js';
import type { ServiceSpec } from '../catalog.js';
import type { Channel } from './channel.js';
import { ModernRemoteChannel } from './modern-remote-channel.js';
import { OpenApiChannel } from './openapi-channel.js';
import type { PoolDeps } from './pool-deps.js';
import { buildProcessEnv } from './process-env.js';
import { type RemoteAuth, RemoteChannel } from './remote-channel.js';
import { StdioChannel } from './stdio-channel.js';
import type { UpstreamTuning } from './types.js';

/**
 * Opens one upstream: the process of a stdio service (its command on record) or the connection to a
 * remote one, or the in-process channel of an OpenAPI service. The pool's links and the one-off health probe (probe.ts) start upstreams alike.
 */
export async function openUpstream(
  deps: Pick<PoolDeps, 'serviceLog' | 'logger' | 'config' | 'metrics' | 'packages' | 'remoteFetch' | 'memory'>,
  tuning: Pick<UpstreamTuning, 'initializeTimeoutMs' | 'stopGraceMs' | 'stderrLinesPerSecond' | 'stdinStallMs'>,
  spec: ServiceSpec,
  userEnv: Record<string, string> | undefined,
  auth: RemoteAuth = {},
  era?: 'modern',
): Promise<Channel> {
  const { serviceLog, logger, config } = deps;
  // A process never starts from an install directory this replica does not have.
  if (spec.type === 'stdio') await deps.packages?.ensure(spec);
  serviceLog.registerSecrets([
    ...spec.secretEnvNames.map((name) => spec.env[name] ?? ''),
    ...Object.values(userEnv ?? {}),
    ...Object.values(spec.headers),
  ]);
  // An OpenAPI service is answered in this process, its calls go out as REST requests (openapi-channel.ts).
  if (spec.type === 'openapi') return OpenApiChannel.open(spec, logger, tuning.initializeTimeoutMs, userEnv, deps.remoteFetch);
  if (spec.type !== 'stdio') {
    // A streamable HTTP server is spoken to in the 2026-07-28 binding on a modern link (modern-link.ts).
    if (era === 'modern') return ModernRemoteChannel.open(spec, logger, tuning.initializeTimeoutMs, deps.remoteFetch, auth);
    return RemoteChannel.open(spec, logger, tuning.initializeTimeoutMs, deps.remoteFetch, auth);
  }
  // Every command run is on record (docs/architecture.md §8); secret values are redacted by the writer.
  serviceLog.write({
    serviceId: spec.id,
    serviceName: spec.name,
    phase: 'run',
    level: 'info',
    message: `starting: ${[spec.command, ...spec.args].join(' ')}`,
  });
  return StdioChannel.open({
    spec,
    env: buildProcessEnv(process.env, spec.env, userEnv, config.registries),
    cwd: resolveInstallDir(config.dataDir, spec.installDir) || path.join(config.dataDir, 'services', String(spec.id)),
    serviceLog,
    logger,
    stopGraceMs: tuning.stopGraceMs,
    stderrLinesPerSecond: tuning.stderrLinesPerSecond,
    stdinStallMs: tuning.stdinStallMs,
    memory: deps.memory,
    onSpawn: () => deps.metrics?.processStarted(spec.name),
    onExit: () => deps.metrics?.processExited(spec.name),
  });
}
