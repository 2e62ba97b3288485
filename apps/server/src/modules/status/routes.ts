import { endpoints, type OidcPublicProvider } from '@toolport/contract';
import { sql } from 'kysely';
import { bounded, CALL_PATH_BOUND_MS, type DatabaseGate } from '../../db/availability.js';
import { type Db, migrationsApplied } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { OptionsService } from '../options/index.js';

/** What the status and probe routes read. */
export interface StatusDeps {
  db: Db;
  /** Bounds the probe: a frozen database answers nothing, and the probe must (decision 0043). */
  gate?: DatabaseGate;
  options: Pick<OptionsService, 'get' | 'bool' | 'providerUsable'>;
  version: string;
  /** The enabled OpenID Connect providers and their return addresses (modules/sign-in-providers). */
  oidcProviders?: (origin: string) => OidcPublicProvider[];
  /** When this process started (epoch milliseconds). */
  startedAt: number;
}

export async function statusRoutes(api: ZodApi, deps: StatusDeps): Promise<void> {
  route(api, endpoints.status.status, async (req, reply) =>
    ok(reply, {
      system_name: 'Toolport',
      version: deps.version,
      start_time: Math.floor(deps.startedAt / 1000),
      server_address: deps.options.get('ServerAddress'),
      github_oauth: deps.options.providerUsable('github'),
      github_client_id: deps.options.get('GitHubClientId'),
      google_oauth: deps.options.providerUsable('google'),
      google_client_id: deps.options.get('GoogleClientId'),
      registration_enabled: deps.options.bool('RegistrationEnabled'),
      oidc_providers: deps.oidcProviders?.(`${req.protocol}://${req.host}`) ?? [],
    }),
  );

  route(api, endpoints.status.health, async (_req, reply) => ok(reply, { status: 'ok' }));

  route(api, endpoints.status.ready, async (req, reply) => {
    const notReady = (reason: 'migrations_pending' | 'database_unreachable') => {
      reply.status(503);
      return { success: false, message: req.t(`status.${reason}`), data: { status: 'not_ready', reason } };
    };
    try {
      // One bound for both queries, well inside the 2 s a load balancer's probe allows.
      const applied = await bounded(
        sql`select 1`.execute(deps.db).then(() => migrationsApplied(deps.db)),
        CALL_PATH_BOUND_MS,
      );
      if (!applied) return notReady('migrations_pending');
      return ok(reply, { status: 'ready' });
    } catch (err) {
      // Tells the call path at once, rather than at its next lookup.
      deps.gate?.failed(err);
      return notReady('database_unreachable');
    }
  });
}
