import type { ServiceCatalog } from '../gateway/catalog.js';
import { allowedHosts, createGateway, type Gateway, type GatewayOptions, MemoryWatch, recordRun } from '../gateway/index.js';
import type { Meter } from '../gateway/meter.js';
import { Principals } from '../http/principals.js';
import { addressCheckedFetch, configuredFetch } from '../infra/outbound.js';
import { createAnalyticsModule } from '../modules/analytics/index.js';
import { type AuditRepo, type AuditTrail, createAuditModule } from '../modules/audit/index.js';
import { type AuthService, createAuthModule, createRefreshTokens } from '../modules/auth/index.js';
import { createAuthorizationServerModule } from '../modules/authorization-server/index.js';
import { createEmbeddingsModule } from '../modules/embeddings/index.js';
import { createExposureModule, createExposurePorts } from '../modules/exposure/index.js';
import { createHistoryModule, type HistoryRetention } from '../modules/history/index.js';
import { createLogsModule } from '../modules/logs/index.js';
import {
  createMarketModule,
  createMarketSources,
  createReplicaInstalls,
  type MarketModule,
  type ReplicaInstalls,
} from '../modules/market/index.js';
import type { OptionsService } from '../modules/options/index.js';
import { createServiceCatalog, createServiceRows, createServicesModule, type ServicesModule } from '../modules/services/index.js';
import { createSignInProvidersModule } from '../modules/sign-in-providers/index.js';
import { createStatusModule } from '../modules/status/index.js';
import { createUpstreamAuthorizationModule } from '../modules/upstream-authorization/index.js';
import { createUsersModule, type UsersRepo, type UsersService } from '../modules/users/index.js';
import { VERSION } from '../version.js';
import type { Core } from './core.js';
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
  audit: ReturnType<typeof createAuditModule>;
  authorizationServer: ReturnType<typeof createAuthorizationServerModule>;
}

/**
 * Builds the modules and the gateway on the core and the platform, in dependency order, each registered on
 * the lifecycle as it is built (docs/decisions/0062). `print` is where bootstrap writes the generated admin password.
 */
export async function buildServerParts(
  core: Core,
  platform: Platform,
  opts: { print?: (line: string) => void; gateway?: GatewayOptions },
): Promise<{ parts: ServerParts; modules: ServerModules }> {
  const { config, db, logger, secrets, events, lifecycle, remote } = core;
  const { metering, gate, serviceLog, metrics, redis, leader } = platform;
  const options = core.options.service;
  const startedAt = Date.now();
  const closing = <M extends { close(): Promise<void> }>(name: string, module: M): M => {
    lifecycle.add({ name, close: () => module.close() });
    return module;
  };
  lifecycle.add({ name: 'leader', close: () => leader.close() });

  // Sign-in issues refresh tokens, the users module revokes them: the store comes before both.
  const refreshTokens = createRefreshTokens(db);
  const users = closing('users', createUsersModule({ db, refreshTokens, secrets, events, config, logger }));
  const principals = new Principals(users.repo, events);
  const catalog = createServiceCatalog({ db, users: users.repo, secrets, events, gate });
  const rows = createServiceRows({ db, events });
  const history = createHistoryModule({ db, options, logger, leader });
  // The retention purge runs in the background once the server is up and stops between two batches on close.
  lifecycle.add({ name: 'history', start: () => history.start(), close: () => history.close() });
  const auth = closing('auth', createAuthModule({ refreshTokens, usersRepo: users.repo, secrets, redis, metrics }));
  // Groups, tool overrides and access (issue 17): the gateway asks their answers through its ToolPolicy and
  // GroupDirectory ports, built first; the module lists live tools through the gateway, built after it.
  const ports = createExposurePorts({ db, events, gate });
  const analytics = closing('analytics', createAnalyticsModule({ db, options, access: ports.access, settleCounts: metering.settle }));
  const logs = closing('logs', createLogsModule({ db, serviceLog, options }));
  const audit = closing('audit', createAuditModule({ db, options, logger }));
  const signIn = closing(
    'sign-in providers',
    createSignInProvidersModule({
      db,
      config,
      options,
      secrets,
      usersRepo: users.repo,
      auth: auth.service,
      events,
      redis,
      principals,
      logger,
    }),
  );
  const status = closing(
    'status',
    createStatusModule({
      db,
      gate,
      options,
      version: VERSION,
      startedAt,
      oidcProviders: (origin) => signIn.service.publicOidcProviders(origin),
    }),
  );
  // Toolport as the OAuth server of its MCP endpoints; the proxy accepts its access tokens through a gateway port.
  const authorizationServer = closing(
    'authorization server',
    createAuthorizationServerModule({
      db,
      secrets,
      options,
      principals,
      switchedOffBy: (userId) => catalog.switchedOffBy(userId),
      events,
      endpoints: {
        // The gateway's own access rule (decision 0040), asked through the ports /proxy and /group ask.
        access: async (user, kind, name) => {
          if (kind === 'proxy') {
            const service = await catalog.byName(name);
            if (!service?.enabled) return 'unknown_endpoint';
            return (await ports.policy.mayUseService(user, service.id)) ? 'allowed' : 'no_access';
          }
          const group = await ports.directory.byName(name);
          if (!group) return 'unknown_endpoint';
          return (await ports.directory.mayUseGroup(user, group.id)) ? 'allowed' : 'no_access';
        },
      },
      // Client ID Metadata Documents are named by anyone: private addresses only if the operator allows (decision 0041).
      fetch: addressCheckedFetch(() => config.clientFetches.allowPrivateNetwork),
      fetchTimeoutMs: config.clientFetches.timeoutMs,
      hostAllowed: allowedHosts(options, config.proxyAccess),
      redis,
      leader,
      logger,
    }),
  );
  await users.ensureSuperAdmin(opts.print);

  // Processes a killed earlier run left behind go first, and this run is recorded before the pool can start any
  // tool server, `boot` ones included (docs/decisions/0045). Released once the gateway has stopped its processes.
  const run = await recordRun(config.dataDir, logger);
  lifecycle.add({ name: 'run record', close: () => run.release() });

  const sources = createMarketSources(config, logger);
  const packages = createReplicaInstalls({ config, redis, events, catalog, rows, serviceLog, logger, sources });
  // Toolport as the OAuth client of remote services: the gateway's links ask it for their tokens.
  const upstreamAuthorization = closing(
    'upstream authorization',
    createUpstreamAuthorizationModule({
      db,
      secrets,
      events,
      options,
      catalog,
      access: ports.access,
      logger,
      leader,
      fetch: remote.fetch,
      // Bound late: the services module is built after the gateway, which needs this module's token keeper.
      recheck: (serviceId): Promise<unknown> => services.health.check(serviceId),
    }),
  );
  // The optional embeddings provider of discovery search: its URL is the admin's, so trusted as to address.
  const embeddings = closing('embeddings', createEmbeddingsModule({ db, options, events, fetch: configuredFetch, logger }));
  const gateway = await createGateway(
    {
      ...platform,
      config,
      db,
      catalog,
      meter: metering.meter,
      options,
      principals,
      events,
      secrets,
      logger,
      remoteFetch: remote.fetch,
      memory: new MemoryWatch(config.stdioMaxRssMb),
      packages,
      authorization: upstreamAuthorization.keeper,
      accessTokens: authorizationServer.accessTokens,
      tools: ports.policy,
      groups: ports.directory,
      semantic: embeddings.ranker,
    },
    opts.gateway,
  );
  // The HTTP server stops it first while it closes (build/http-server.ts); this close finds it stopped then.
  lifecycle.add({
    name: 'gateway',
    start: () => gateway.start(),
    close: () => gateway.stop(),
    closeTimeoutMs: config.shutdownGraceMs + 15_000,
  });
  const exposure = closing('exposure', createExposureModule({ events, ports, catalog, gateway }));
  const services: ServicesModule = closing(
    'services',
    createServicesModule({
      db,
      secrets,
      events,
      options,
      remote,
      serviceLog,
      rows,
      catalog,
      gateway,
      oauth: upstreamAuthorization.flow,
      access: ports.access,
      settleCounts: metering.settle,
    }),
  );
  const market = createMarketModule({
    db,
    config,
    logger,
    secrets,
    events,
    serviceLog,
    metrics,
    leader,
    principals,
    services,
    sources,
    gateway,
    replicaInstalls: packages,
    transfer: exposure.transfer,
  });
  // Recovers the install tasks a stopped server left unfinished; on close, installs finish writing.
  lifecycle.add({ name: 'market', start: () => market.start(), close: () => market.close() });

  const parts: ServerParts = {
    config,
    db,
    engine: core.database.engine,
    logger,
    secrets,
    events,
    remote,
    redis,
    leader,
    metrics,
    tracing: platform.tracing,
    serviceLog,
    principals,
    options,
    catalog,
    gateway,
    services,
    market,
    packages,
    startedAt,
    version: VERSION,
    usersRepo: users.repo,
    users: users.service,
    auth: auth.service,
    meter: metering.meter,
    retention: history.retention,
    audit: { trail: audit.trail, repo: audit.repo },
  };
  const modules: ServerModules = {
    api: [
      { name: 'status', routes: (api) => status.routes(api) },
      { name: 'auth', routes: (api) => auth.routes(api) },
      { name: 'users', routes: (api) => users.routes(api) },
      { name: 'options', routes: (api) => core.options.routes(api) },
      { name: 'embeddings', routes: (api) => embeddings.routes(api) },
      { name: 'services', routes: (api) => services.routes(api) },
      { name: 'exposure', routes: (api) => exposure.routes(api) },
      { name: 'analytics', routes: (api) => analytics.routes(api) },
      { name: 'logs', routes: (api) => logs.routes(api) },
      { name: 'audit', routes: (api) => audit.routes(api) },
      { name: 'market', routes: (api) => market.routes(api) },
      { name: 'sign-in providers', routes: (api) => signIn.routes(api) },
      { name: 'upstream authorization', routes: (api) => upstreamAuthorization.routes(api) },
      { name: 'authorization server', routes: (api) => authorizationServer.routes(api) },
    ],
    audit,
    authorizationServer,
  };
  return { parts, modules };
}
