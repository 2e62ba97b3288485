import { envelope, StatusData } from '@toolport/contract';
import { sql } from 'kysely';
import { z } from 'zod';
import { type Db, migrationsApplied } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import { ok } from '../../http/locale.js';
import type { OptionsService } from '../options/index.js';

const Probe = envelope(z.object({ status: z.string(), reason: z.string().optional() }));

/** What the status and probe routes read. */
export interface StatusDeps {
  db: Db;
  options: Pick<OptionsService, 'get' | 'bool' | 'providerUsable'>;
  version: string;
  /** When this process started (epoch milliseconds). */
  startedAt: number;
}

export async function statusRoutes(api: ZodApi, deps: StatusDeps): Promise<void> {
  api.get(
    '/status',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['status'],
        summary: 'What the console needs before sign-in; never secrets',
        response: { 200: envelope(StatusData) },
      },
    },
    async (_req, reply) =>
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

  api.get(
    '/health',
    { config: { auth: 'public' }, schema: { tags: ['status'], summary: 'Liveness probe', response: { 200: Probe } } },
    async (_req, reply) => ok(reply, { status: 'ok' }),
  );

  api.get(
    '/ready',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['status'],
        summary: 'Readiness probe: database reachable and migrations applied',
        response: { 200: Probe, 503: Probe },
      },
    },
    async (req, reply) => {
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
    },
  );
}
