/**
 * The narrow interface between configuration (modules/) and the data plane (gateway/), as
 * docs/architecture.md §2 asks: the gateway reads services and users through it and reacts to the
 * ConfigEvents the admin API emits ('service.changed', 'service.removed', 'user.changed',
 * 'option.changed'). Nothing in gateway/ imports a route module.
 */
import type { OpenApiPlan } from './openapi/plan.js';

export type ServiceKind = 'stdio' | 'sse' | 'streamableHttp' | 'openapi';

/** A service as the gateway runs it: secrets decrypted, JSON parsed. */
export interface ServiceSpec {
  id: number;
  name: string;
  displayName: string;
  /** What the service says it does (discovery lists it when a search finds nothing good). */
  description?: string;
  type: ServiceKind;
  /** stdio: the executable; sse/streamableHttp: the URL; openapi: the document's URL ('' when uploaded). */
  command: string;
  args: string[];
  /** Default variable values (stdio environment). */
  env: Record<string, string>;
  /** Upstream request headers (sse/streamableHttp/openapi). */
  headers: Record<string, string>;
  /** openapi: the compiled document (gateway/openapi/plan.ts). */
  openapi?: OpenApiPlan;
  /** Names of variables whose values are secret: redacted from logs. */
  secretEnvNames: string[];
  /** Working directory of the process; empty means DATA_DIR/services/<id>. */
  installDir: string;
  /**
   * The installed package's version ('' when none): a new one (an Update) restarts the process even
   * when its command line reads the same.
   */
  packageVersion?: string;
  enabled: boolean;
  isolation: 'shared' | 'session';
  /** Requests per user per day; 0 = unlimited. */
  rpdLimit: number;
  updatedAt: number;
}

/** The caller of a proxied request, found by API key. */
export interface GatewayUser {
  id: number;
  username: string;
  role: number;
  enabled: boolean;
  /** Services this user switched off for themselves (personal switches): their calls are refused. */
  switchedOff: ReadonlySet<number>;
}

/**
 * `needs_authorization`: a remote service that answered 401 (or whose OAuth connection is missing) — not a
 * fault of the service; the console offers Connect (decision 0054).
 */
export type HealthStatus = 'healthy' | 'unhealthy' | 'unknown' | 'stopped' | 'needs_authorization';

export interface ServiceCatalog {
  byName(name: string): Promise<ServiceSpec | undefined>;
  byId(id: number): Promise<ServiceSpec | undefined>;
  enabledServices(): Promise<ServiceSpec[]>;
  /** A user's personal variable values for a service, or undefined when the user has none. */
  userEnv(serviceId: number, userId: number): Promise<Record<string, string> | undefined>;
  /** The services a user switched off for themselves, read fresh (for ending their sessions). */
  switchedOffBy(userId: number): Promise<ReadonlySet<number>>;
  /** The user owning an API key (by its SHA-256), or undefined. */
  userByApiKey(plainKey: string): Promise<GatewayUser | undefined>;
  /**
   * Health results flow back to configuration through here; with `whileEnabled`, only while the flag has
   * that value. `about` (the server's own description) fills an empty description, never a typed one.
   */
  recordHealth(
    serviceId: number,
    health: { status: HealthStatus; details: string; toolCount?: number; about?: string },
    whileEnabled?: boolean,
  ): Promise<void>;
}
