import { type DatabaseGate, LastKnown } from '../../db/availability.js';
import type { ServiceRow } from '../../db/schema.js';
import type { GatewayUser, HealthStatus, ServiceCatalog, ServiceKind, ServiceSpec } from '../../gateway/catalog.js';
import type { OpenApiPlan } from '../../gateway/openapi/plan.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Secrets } from '../../infra/secrets.js';
import { hashApiKey, type UsersRepo } from '../users/index.js';
import type { ServicesRepo } from './repo.js';

/** How long a key lookup is trusted: a disabled user is refused within this time even across replicas. */
const KEY_CACHE_MS = 2000;

interface DeclaredVariable {
  name: string;
  is_secret?: boolean;
}

/** The declared variables of a service (marketplace installs); custom services declare none. */
export function declaredVariables(row: Pick<ServiceRow, 'env_schema_json'>): DeclaredVariable[] {
  try {
    const parsed: unknown = JSON.parse(row.env_schema_json || '[]');
    return Array.isArray(parsed) ? parsed.filter((v): v is DeclaredVariable => typeof v?.name === 'string') : [];
  } catch {
    return [];
  }
}

function parseArgs(json: string): string[] {
  try {
    const parsed: unknown = JSON.parse(json || '[]');
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

/**
 * The gateway's view of configuration (gateway/catalog.ts), read from the services table with
 * secrets decrypted. API key lookups are cached for two seconds and dropped when a user changes.
 * With a gate (decision 0043) the reads of the call path are bounded, and while the database is away
 * they answer what the database last said: services, users and personal values already seen.
 */
export class ServicesCatalog implements ServiceCatalog {
  private readonly keyCache = new Map<string, { user: GatewayUser | undefined; until: number }>();
  private readonly rows: LastKnown<ServiceRow | undefined>;
  private readonly envs: LastKnown<string | undefined>;
  private readonly keyUsers: LastKnown<GatewayUser | undefined>;

  constructor(
    private readonly repo: ServicesRepo,
    private readonly usersRepo: Pick<UsersRepo, 'byApiKeyHash'>,
    private readonly secrets: Secrets,
    events: ConfigEvents,
    gate?: DatabaseGate,
  ) {
    this.rows = new LastKnown(gate);
    // Asked for callers already authenticated: having no personal values is an answer to remember.
    this.envs = new LastKnown(gate, true);
    this.keyUsers = new LastKnown(gate);
    events.on((e) => {
      if (e.type === 'user.changed') {
        this.keyCache.clear();
        this.keyUsers.forget((_, user) => user?.id === e.userId);
        this.envs.forget((key) => key.endsWith(`:${e.userId}`));
      }
    });
  }

  toSpec(row: ServiceRow): ServiceSpec {
    const env = this.secrets.decryptJson<Record<string, string>>(row.env_enc, {});
    // A variable is secret unless its declaration says otherwise: custom services declare nothing.
    const declared = new Map(declaredVariables(row).map((v) => [v.name, v.is_secret !== false]));
    const names = new Set([...Object.keys(env), ...declared.keys()]);
    return {
      id: row.id,
      name: row.name,
      displayName: row.display_name || row.name,
      description: row.description,
      type: row.type as ServiceKind,
      command: row.command,
      args: parseArgs(row.args_json),
      env,
      headers: this.secrets.decryptJson<Record<string, string>>(row.headers_enc, {}),
      ...(row.type === 'openapi' && row.openapi_json ? { openapi: JSON.parse(row.openapi_json) as OpenApiPlan } : {}),
      secretEnvNames: [...names].filter((n) => declared.get(n) !== false),
      installDir: row.install_dir,
      packageVersion: row.install_dir ? row.version : '',
      enabled: row.enabled === 1,
      isolation: row.isolation === 'session' ? 'session' : 'shared',
      rpdLimit: row.rpd_limit,
      updatedAt: row.updated_at,
    };
  }

  async byName(name: string): Promise<ServiceSpec | undefined> {
    const row = await this.rows.get(`name:${name}`, () => this.repo.byName(name));
    return row ? this.toSpec(row) : undefined;
  }

  async byId(id: number): Promise<ServiceSpec | undefined> {
    const row = await this.rows.get(`id:${id}`, () => this.repo.byId(id));
    return row ? this.toSpec(row) : undefined;
  }

  async enabledServices(): Promise<ServiceSpec[]> {
    return (await this.repo.enabled()).map((row) => this.toSpec(row));
  }

  async userEnv(serviceId: number, userId: number): Promise<Record<string, string> | undefined> {
    const sealed = await this.envs.get(`${serviceId}:${userId}`, () => this.repo.userEnv(serviceId, userId));
    if (!sealed) return undefined;
    const env = this.secrets.decryptJson<Record<string, string>>(sealed, {});
    return Object.keys(env).length > 0 ? env : undefined;
  }

  async userByApiKey(plainKey: string): Promise<GatewayUser | undefined> {
    const hash = hashApiKey(plainKey);
    const now = Date.now();
    const cached = this.keyCache.get(hash);
    if (cached && cached.until > now) return cached.user;
    const user = await this.keyUsers.get(hash, async () => {
      const row = await this.usersRepo.byApiKeyHash(hash);
      return row
        ? {
            id: row.id,
            username: row.username,
            role: row.role,
            enabled: row.status === 1,
            switchedOff: await this.repo.switchedOffBy(row.id),
          }
        : undefined;
    });
    // Bounded: unknown keys are cached too (they are what an attacker would spray), so prune old entries.
    if (this.keyCache.size > 10_000) this.keyCache.clear();
    this.keyCache.set(hash, { user, until: now + KEY_CACHE_MS });
    return user;
  }

  switchedOffBy(userId: number): Promise<ReadonlySet<number>> {
    return this.repo.switchedOffBy(userId);
  }

  async recordHealth(
    serviceId: number,
    health: { status: HealthStatus; details: string; toolCount?: number; about?: string },
    whileEnabled?: boolean,
  ): Promise<void> {
    // A service created without a description takes the server's own at its first healthy check; a typed one stays.
    if (health.status === 'healthy' && health.about) await this.repo.fillDescription(serviceId, health.about);
    await this.repo.update(
      serviceId,
      {
        health_status: health.status,
        health_details: health.details.slice(0, 4000),
        last_health_check: Date.now(),
        ...(health.toolCount === undefined ? {} : { tool_count: health.toolCount }),
      },
      whileEnabled,
    );
  }
}
