import type { DatabaseGate } from '../../db/availability.js';
import type { Db } from '../../db/db.js';
import type { ServiceRow } from '../../db/schema.js';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import type { ZodApi } from '../../http/api.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { RemoteAddresses } from '../../infra/outbound.js';
import type { Secrets } from '../../infra/secrets.js';
import type { ServiceLog } from '../../infra/service-log.js';
import type { UsersRepo } from '../users/index.js';
import { ServicesCatalog } from './catalog.js';
import { HealthChecks, type HealthProbe } from './health.js';
import { PersonalEnvs } from './personal-env.js';
import { ServicesRepo } from './repo.js';
import { serviceRoutes } from './routes.js';
import { ServiceRows } from './rows.js';
import { type ServiceAccess, type ServiceOAuthPort, ServicesService } from './service.js';

export type { ServicesCatalog } from './catalog.js';
export { SERVICE_NAME, slugFrom } from './command-line.js';
export { type CustomDraft, checkedEnv, checkedHeaders } from './custom.js';
export type { HealthChecks, HealthProbe, PersonalConnections } from './health.js';
export { previewTools } from './openapi.js';
export type { PersonalEnvs } from './personal-env.js';
export type { ServiceOAuthView } from './presenter.js';
export type { ServiceRows } from './rows.js';
export { type ServiceAccess, type ServiceOAuthPort, type ServicesService, serviceIdOf } from './service.js';

/** What the gateway's reader of the catalog is built from: it must exist before the gateway does. */
export interface ServiceCatalogDeps {
  db: Db;
  secrets: Secrets;
  events: ConfigEvents;
  /** Proxied requests authenticate with API keys: their owners are looked up here. */
  users: Pick<UsersRepo, 'byApiKeyHash'>;
  /** Bounds the call path's reads; while the database is away they answer from memory (decision 0043). */
  gate?: DatabaseGate;
}

/** The configuration as the gateway reads it, secrets decrypted (gateway/catalog.ts). */
export function createServiceCatalog(deps: ServiceCatalogDeps): ServicesCatalog {
  return new ServicesCatalog(new ServicesRepo(deps.db), deps.users, deps.secrets, deps.events, deps.gate);
}

/** The service rows the install lifecycle writes: before the gateway, as this replica's installs read them too. */
export function createServiceRows(deps: { db: Db; events: ConfigEvents }): ServiceRows {
  return new ServiceRows(new ServicesRepo(deps.db), deps.events);
}

/** Everything the services module may touch. */
export interface ServicesDeps {
  db: Db;
  secrets: Secrets;
  events: ConfigEvents;
  /** The time zone a user's requests of today are counted in. */
  options: { get(key: 'TimeZone'): string };
  /** The address rule of remote URLs (infra/outbound.ts `remoteAddresses`), built by the core. */
  remote: RemoteAddresses;
  serviceLog: Pick<ServiceLog, 'redact'>;
  /** From createServiceRows: the same rows the replica installs read. */
  rows: ServiceRows;
  /** Where health results are stored when the gateway could not even try (createServiceCatalog's). */
  catalog: Pick<ServiceCatalog, 'recordHealth'>;
  /** The gateway: on-demand health checks are its MCP round trips. */
  gateway: HealthProbe;
  /** OAuth connections of remote services (modules/upstream-authorization): the view in the list, the mode on edit. */
  oauth?: ServiceOAuthPort;
  /** Who may use which service (issue 17, the exposure module): lists are filtered, PUT sets it. */
  access?: ServiceAccess;
  /** Folds this replica's metering journal first, so today's counts read are those enforced (decision 0043). */
  settleCounts?: () => Promise<void>;
}

export interface ServicesModule {
  services: ServicesService;
  /** The rows the install lifecycle creates, completes and removes. */
  rows: ServiceRows;
  health: HealthChecks;
  personal: PersonalEnvs;
  routes(api: ZodApi): Promise<void>;
  /** Nothing runs in the background here today; the composition root closes every module alike. */
  close(): Promise<void>;
}

/** The catalog of services: rows, custom-service rules, edits, toggles, health and personal values. */
export function createServicesModule(deps: ServicesDeps): ServicesModule {
  const repo = new ServicesRepo(deps.db);
  const services = new ServicesService({
    repo,
    secrets: deps.secrets,
    events: deps.events,
    options: deps.options,
    remote: deps.remote,
    oauth: deps.oauth,
    access: deps.access,
    settleCounts: deps.settleCounts,
  });
  const health = new HealthChecks({
    repo,
    probe: deps.gateway,
    catalog: deps.catalog,
    serviceLog: deps.serviceLog,
    ...(deps.oauth ? { personal: deps.oauth } : {}),
  });
  const personal = new PersonalEnvs({ repo, secrets: deps.secrets, events: deps.events });
  return {
    services,
    rows: deps.rows,
    health,
    personal,
    routes: (api) => serviceRoutes(api, { services, health, personal }),
    close: async () => undefined,
  };
}

/** Every service row, for the export command that reads the database without a running server. */
export function allServiceRows(db: Db): Promise<ServiceRow[]> {
  return new ServicesRepo(db).all();
}
