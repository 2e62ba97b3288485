import type { Logger } from 'pino';
import type { ConfigEvents } from '../../infra/events.js';
import type { Leadership } from '../../infra/leader.js';
import type { UpstreamMetrics } from '../../infra/metrics.js';
import type { FetchLike } from '../../infra/outbound.js';
import type { ServiceCatalog, ServiceSpec } from '../catalog.js';
import type { UpstreamAuthorization } from '../upstream-auth.js';
import type { LinkCredentials } from './credentials.js';
import type { MemoryWatch } from './memory-watch.js';
import type { RegistryMirrors } from './process-env.js';
import type { OptionsReader, ServiceLogWriter } from './types.js';

export interface PoolDeps {
  catalog: ServiceCatalog;
  serviceLog: ServiceLogWriter;
  options: OptionsReader;
  events: ConfigEvents;
  logger: Logger;
  config: { dataDir: string; registries?: RegistryMirrors };
  /**
   * Remote services, OpenAPI base URLs and their redirects are fetched through this: the core's
   * `remoteAddresses(…).fetch` (infra/outbound.ts), under the preference AllowPrivateNetworkUpstreams.
   */
  remoteFetch: FetchLike;
  /** The resident-memory cap of stdio processes (memory-watch.ts, STDIO_MAX_RSS_MB); nothing is measured without it. */
  memory?: MemoryWatch;
  /** Processes and restarts are counted here (infra/metrics.ts). */
  metrics?: UpstreamMetrics;
  /** Several replicas: who health-checks the remote services (infra/leader.ts). */
  leader?: Pick<Leadership, 'runs'>;
  /** Several replicas: installs a service's package into this replica's DATA_DIR before it starts here. */
  packages?: LocalPackages;
  /** OAuth connections of remote services (modules/upstream-authorization): tokens per link, never read from tables here. */
  authorization?: UpstreamAuthorization;
  /** What a link needs, asked once per acquisition (credentials.ts); built from `catalog` and `authorization` unless given. */
  credentials?: Pick<LinkCredentials, 'forLink'>;
}

/**
 * The packages of installed services on this replica (modules/market/install-replica.ts): nothing
 * to wait for when they are here, else the local install. A client's request waits a while only
 * (`forRequest`) and is then told to come back; a process start waits for the install.
 */
export interface LocalPackages {
  ensure(spec: ServiceSpec, forRequest?: boolean): Promise<void> | undefined;
}
