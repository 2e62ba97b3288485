import type { ServiceCatalog } from '../gateway/catalog.js';
import type { Gateway, GatewayOptions } from '../gateway/index.js';
import type { Meter } from '../gateway/meter.js';
import type { Principals } from '../http/principals.js';
import type { AuditModule, AuditRepo, AuditTrail } from '../modules/audit/index.js';
import type { AuthService } from '../modules/auth/index.js';
import type { AuthorizationServerModule } from '../modules/authorization-server/index.js';
import type { HistoryRetention } from '../modules/history/index.js';
import type { MarketModule, ReplicaInstalls } from '../modules/market/index.js';
import type { OptionsService } from '../modules/options/index.js';
import type { ServicesModule } from '../modules/services/index.js';
import type { UsersRepo, UsersService } from '../modules/users/index.js';
import { VERSION } from '../version.js';
import { buildCatalog, buildCatalogModules } from './catalog.js';
import type { Core } from './core.js';
import { buildGateway } from './gateway.js';
import { buildAuthorization, buildIdentity } from './identity.js';
import { buildObservation } from './observation.js';
import type { Platform } from './platform.js';

/** Every part of the server, built once (tests read them). */
export interface ServerParts extends Omit<Core, 'options' | 'database' | 'lifecycle'>, Omit<Platform, 'metering' | 'gate'> {
  engine: Core['database']['engine'];
  principals: Principals;
  options: OptionsService;
  usersRepo: UsersRepo;
  users: UsersService;
  auth: AuthService;
  /** Configuration as the gateway reads it (modules/services/catalog.ts). */
  catalog: ServiceCatalog;
  /** Daily limits, counters and request records (modules/metering). */
  meter: Meter;
  /** The retention purge of request records, service logs and install logs (modules/history). */
  retention: HistoryRetention;
  /** Who changed what (modules/audit): the entries written and the store read. */
  audit: { trail: AuditTrail; repo: AuditRepo };
  /** Several replicas: local installs of the packages installed through another one (modules/market/install/replica.ts). */
  packages?: ReplicaInstalls;
  /** The MCP data plane (gateway/index.ts): start/stop, its options, what the console asks. */
  gateway: Gateway;
  /** The catalog of services: rows, edits, health checks, personal values (modules/services). */
  services: ServicesModule;
  /** Search, the install lifecycle, batch import and export (modules/market). */
  market: MarketModule;
  startedAt: number;
  version: string;
}

/** The modules in the order they are built, each with its routes under /api (build/http-server.ts mounts them). */
export interface ServerModules {
  api: { name: string; routes(api: Parameters<MarketModule['routes']>[0]): Promise<void> }[];
  audit: AuditModule;
  authorizationServer: AuthorizationServerModule;
}

/**
 * Builds the modules and the gateway on the core and the platform, area by area in dependency order (identity,
 * catalog, observation, authorization, the gateway, the catalog's modules), each builder registering its parts
 * on the lifecycle as it builds them (docs/decisions/0062). `print` is where bootstrap writes the generated
 * admin password.
 */
export async function buildServerParts(
  core: Core,
  platform: Platform,
  opts: { print?: (line: string) => void; gateway?: GatewayOptions },
): Promise<{ parts: ServerParts; modules: ServerModules }> {
  const { config, db, logger, secrets, events, lifecycle, remote } = core;
  const { metering, gate, serviceLog, metrics, redis, leader, tracing } = platform;
  const options = core.options.service;
  const startedAt = Date.now();
  lifecycle.add({ name: 'leader', close: () => leader.close() });

  const base = { config, db, logger, secrets, events, lifecycle, options };
  const { users, principals, auth, signIn } = await buildIdentity({ ...base, redis, metrics, print: opts.print });
  const reads = buildCatalog({ ...base, gate, redis, serviceLog, usersRepo: users.repo });
  const { catalog, ports, embeddings } = reads;
  const seen = buildObservation({
    db,
    logger,
    lifecycle,
    options,
    gate,
    leader,
    serviceLog,
    metering,
    access: ports.access,
    oidcProviders: (origin) => signIn.service.publicOidcProviders(origin),
    startedAt,
  });
  const { authorizationServer, upstreamAuthorization } = buildAuthorization({
    ...base,
    remote,
    redis,
    leader,
    principals,
    catalog,
    ports,
    // Bound late: the services module is built after the gateway, which needs this module's token keeper.
    recheck: (serviceId, as): Promise<unknown> => services.health.check(serviceId, as),
  });
  const gateway = await buildGateway(
    {
      config,
      lifecycle,
      db,
      catalog,
      meter: metering.meter,
      options,
      principals,
      events,
      serviceLog,
      secrets,
      logger,
      metrics,
      tracing,
      leader,
      gate,
      redis,
      remoteFetch: remote.fetch,
      packages: reads.packages,
      authorization: upstreamAuthorization.keeper,
      accessTokens: authorizationServer.accessTokens,
      tools: ports.policy,
      groups: ports.directory,
      semantic: embeddings.ranker,
    },
    opts.gateway,
  );
  const { services, exposure, market } = buildCatalogModules({
    ...base,
    ...reads,
    remote,
    serviceLog,
    metrics,
    leader,
    metering,
    principals,
    gateway,
    oauth: upstreamAuthorization.flow,
  });

  const parts: ServerParts = {
    ...{ config, db, logger, secrets, events, remote, redis, leader, metrics, tracing, serviceLog, principals, options },
    ...{ catalog, gateway, services, market, packages: reads.packages, startedAt, version: VERSION },
    engine: core.database.engine,
    usersRepo: users.repo,
    users: users.service,
    auth: auth.service,
    meter: metering.meter,
    retention: seen.history.retention,
    audit: { trail: seen.audit.trail, repo: seen.audit.repo },
  };
  const { status, analytics, logs, audit } = seen;
  const routed = { status, auth, users, options: core.options, embeddings, services, exposure, analytics, logs, audit, market };
  const more = {
    'sign-in providers': signIn,
    'upstream authorization': upstreamAuthorization,
    'authorization server': authorizationServer,
  };
  return { parts, modules: { api: apiList({ ...routed, ...more }), audit, authorizationServer } };
}

type Routed = { routes: ServerModules['api'][number]['routes'] };

/** The modules with routes under /api, in the order they are mounted (the order of `routed`'s keys). */
function apiList(routed: Record<string, Routed>): ServerModules['api'] {
  return Object.entries(routed).map(([name, module]) => ({ name, routes: (api) => module.routes(api) }));
}
