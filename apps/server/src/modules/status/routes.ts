import { endpoints } from '@toolport/contract';
import { sql } from 'kysely';
import { type Db, migrationsApplied } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { OptionsService } from '../options/index.js';

/** What the status and probe routes read. */
export interface StatusDeps {
  db: Db;
  options: Pick<OptionsService, 'get' | 'bool' | 'providerUsable'>;
  version: string;
  /** When this process started (epoch milliseconds). */
  startedAt: number;
}

export async function statusRoutes(api: ZodApi, deps: StatusDeps): Promise<void> {
  route(api, endpoints.status.status, async (_req, reply) =>
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
    }),
  );

  route(api, endpoints.status.health, async (_req, reply) => ok(reply, { status: 'ok' }));

  route(api, endpoints.status.ready, async (req, reply) => {
    const notReady = (reason: 'migrations_pending' | 'database_unreachable') => {
      reply.status(503);
      return { success: false, message: req.t(`status.${reason}`), data: { status: 'not_ready', reason } };
    };
    try {
      await sql`select 1`.execute(deps.db);
      if (!(await migrationsApplied(deps.db))) return notReady('migrations_pending');
      return ok(reply, { status: 'ready' });
    } catch {
      return notReady('database_unreachable');
    }
  });
}
