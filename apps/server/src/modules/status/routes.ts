import { endpoints } from '@toolport/contract';
import { sql } from 'kysely';
import type { AppContext } from '../../context.js';
import { migrationsApplied } from '../../db/db.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { ZodApi } from '../index.js';

export async function statusRoutes(api: ZodApi, ctx: AppContext): Promise<void> {
  route(api, endpoints.status.status, async (_req, reply) =>
    ok(reply, {
      system_name: 'Toolport',
      version: ctx.version,
      start_time: Math.floor(ctx.startedAt / 1000),
      server_address: ctx.options.get('ServerAddress'),
      github_oauth: ctx.options.providerUsable('github'),
      github_client_id: ctx.options.get('GitHubClientId'),
      google_oauth: ctx.options.providerUsable('google'),
      google_client_id: ctx.options.get('GoogleClientId'),
      registration_enabled: ctx.options.bool('RegistrationEnabled'),
    }),
  );

  route(api, endpoints.status.health, async (_req, reply) => ok(reply, { status: 'ok' }));

  route(api, endpoints.status.ready, async (req, reply) => {
    const notReady = (reason: 'migrations_pending' | 'database_unreachable') => {
      reply.status(503);
      return { success: false, message: req.t(`status.${reason}`), data: { status: 'not_ready', reason } };
    };
    try {
      await sql`select 1`.execute(ctx.db);
      if (!(await migrationsApplied(ctx.db))) return notReady('migrations_pending');
      return ok(reply, { status: 'ready' });
    } catch {
      return notReady('database_unreachable');
    }
  });
}
