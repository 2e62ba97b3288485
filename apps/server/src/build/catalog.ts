import type { Principals } from '../http/principals.js';
import { configuredFetch } from '../infra/outbound.js';
import { createEmbeddingsModule, type EmbeddingsModule } from '../modules/embeddings/index.js';
import {
  createExposureModule,
  createExposurePorts,
  type ExposureDeps,
  type ExposureModule,
  type ExposurePorts,
  type ExposureTransfer,
} from '../modules/exposure/index.js';
import {
  createMarketModule,
  createMarketSources,
  createReplicaInstalls,
  type MarketModule,
  type MarketSources,
  type ReplicaInstalls,
} from '../modules/market/index.js';
import type { OptionsService } from '../modules/options/index.js';
import {
  createServiceCatalog,
  createServiceRows,
  createServicesModule,
  type HealthProbe,
  type ServiceOAuthPort,
  type ServiceRows,
  type ServicesCatalog,
  type ServicesDeps,
  type ServicesModule,
} from '../modules/services/index.js';
import type { UsersRepo } from '../modules/users/index.js';
import type { Core } from './core.js';
import { closing } from './identity.js';
import type { Platform } from './platform.js';

export type CatalogDeps = Pick<Core, 'config' | 'db' | 'logger' | 'secrets' | 'events' | 'lifecycle'> &
  Pick<Platform, 'gate' | 'redis' | 'serviceLog'> & { options: OptionsService; usersRepo: UsersRepo };

/** What the gateway reads the services by, built before it: the catalog, groups and access, packages, embeddings. */
export interface Catalog {
  catalog: ServicesCatalog;
  rows: ServiceRows;
  /** Groups, tool overrides and access lists as the gateway asks them (ToolPolicy, GroupDirectory). */
  ports: ExposurePorts;
  sources: MarketSources;
  /** Several replicas: local installs of the packages installed through another one. */
  packages?: ReplicaInstalls;
  embeddings: EmbeddingsModule;
}

export function buildCatalog(d: CatalogDeps): Catalog {
  const { config, db, logger, secrets, events, lifecycle, gate, redis, serviceLog, options, usersRepo } = d;
  const catalog = createServiceCatalog({ db, users: usersRepo, secrets, events, gate });
  const rows = createServiceRows({ db, events });
  // Groups, tool overrides and access (issue 17): the gateway asks their answers through its ToolPolicy and
  // GroupDirectory ports, built first; the exposure module lists live tools through the gateway, built after it.
  const ports = createExposurePorts({ db, events, gate });
  const sources = createMarketSources(config, logger);
  const packages = createReplicaInstalls({ config, redis, events, catalog, rows, serviceLog, logger, sources });
  // The optional embeddings provider of discovery search: its URL is the admin's, so trusted as to address.
  const embeddings = closing(lifecycle, 'embeddings', createEmbeddingsModule({ db, options, events, fetch: configuredFetch, logger }));
  return { catalog, rows, ports, sources, packages, embeddings };
}

export type CatalogModulesDeps = Omit<InstallingDeps, 'gateway' | 'transfer' | 'access' | 'settleCounts' | 'oauth'> &
  Pick<Platform, 'metering'> &
  Omit<Catalog, 'embeddings'> & {
    /** The gateway: health checks and installs (HealthProbe), the live tool lists and Try it (the exposure module's). */
    gateway: HealthProbe & ExposureDeps['gateway'];
    /** OAuth connections of remote services (modules/upstream-authorization's flow). */
    oauth: ServiceOAuthPort;
  };

/** The modules that change the catalog through the gateway, built after it: services, groups and access, the market. */
export interface CatalogModules {
  services: ServicesModule;
  exposure: ExposureModule;
  market: MarketModule;
}

/** The server's: groups and access on the gateway's live tool lists, then services and market (buildInstalling). */
export function buildCatalogModules(d: CatalogModulesDeps): CatalogModules {
  const { events, lifecycle, ports, catalog, gateway, metering } = d;
  const exposure = closing(lifecycle, 'exposure', createExposureModule({ events, ports, catalog, gateway }));
  const { services, market } = buildInstalling({
    ...d,
    transfer: exposure.transfer,
    access: ports.access,
    settleCounts: metering.settle,
  });
  return { services, exposure, market };
}

export type InstallingDeps = Pick<Core, 'config' | 'db' | 'logger' | 'secrets' | 'events' | 'lifecycle' | 'remote'> &
  Pick<Platform, 'serviceLog' | 'metrics' | 'leader'> &
  Pick<Catalog, 'catalog' | 'rows' | 'sources' | 'packages'> & {
    options: OptionsService;
    principals: Principals;
    /**
     * The gateway port installs and health checks need: a new service's MCP handshake is its health check. The
     * server's gateway, or for `toolport import` the one-off health probe (gateway/index.ts `createHealthProbe`).
     */
    gateway: HealthProbe;
    /** Overrides, access and groups in batch imports and exports: the exposure module's, or without it no groups. */
    transfer: ExposureTransfer;
    /** The server's (buildCatalogModules): who may use which service, from the exposure ports. */
    access?: ServicesDeps['access'];
    /** The server's: its metering journal folded before today's counts are read. */
    settleCounts?: ServicesDeps['settleCounts'];
    /** The server's: OAuth connections of remote services (modules/upstream-authorization's flow). */
    oauth?: ServiceOAuthPort;
  };

/**
 * The services and market modules, which install and health-check services through the gateway port they are
 * given, each registered on the lifecycle. The server builds them through buildCatalogModules; `toolport import`
 * (modules/market/batch/cli.ts) on the one-off health probe, without replica installs, and never starts the
 * lifecycle, so the market recovers no interrupted install task there.
 */
export function buildInstalling(d: InstallingDeps): Pick<CatalogModules, 'services' | 'market'> {
  const { config, db, logger, secrets, events, lifecycle, remote, serviceLog, metrics, leader } = d;
  const { catalog, rows, sources, packages, options, principals, gateway } = d;
  const services = closing(
    lifecycle,
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
      oauth: d.oauth,
      access: d.access,
      settleCounts: d.settleCounts,
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
    transfer: d.transfer,
  });
  // Recovers the install tasks a stopped server left unfinished; on close, installs finish writing.
  lifecycle.add({ name: 'market', start: () => market.start(), close: () => market.close() });
  return { services, market };
}
