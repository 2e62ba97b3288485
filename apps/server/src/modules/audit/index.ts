import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { OptionsService } from '../options/index.js';
import { installAuditHook } from './hook.js';
import { AuditRepo } from './repo.js';
import { auditRoutes } from './routes.js';
import { AuditTrail, type CommandAction } from './trail.js';

export { bodyFields as bodyFieldsOf, maskChanges } from './mask.js';
export type { AuditRepo, NewAuditEntry } from './repo.js';
export { auditedRoutes } from './routes-audited.js';
export type { AuditTrail, CommandAction } from './trail.js';

export interface AuditDeps {
  db: Db;
  /** AuditLogForwarding: each entry also goes to the server log. */
  options: Pick<OptionsService, 'bool'>;
  logger: Pick<Logger, 'info'>;
}

export interface AuditModule {
  trail: AuditTrail;
  repo: AuditRepo;
  /** Records the audited API routes' answers (hook.ts); installed on the app before the API routes. */
  install(app: FastifyInstance): void;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** The audit trail (decision 0049): who changed what, sign-ins and refused sign-ins. */
export function createAuditModule(deps: AuditDeps): AuditModule {
  const repo = new AuditRepo(deps.db);
  const trail = new AuditTrail(repo, () => deps.options.bool('AuditLogForwarding'), deps.logger);
  return {
    trail,
    repo,
    install: (app) => installAuditHook(app, trail),
    routes: (api) => auditRoutes(api, repo),
    close: async () => undefined,
  };
}

/**
 * The trail of a `toolport` command: its entries go to the database only (the command's own output is
 * not the server's log stream).
 */
export function createCommandAudit(db: Db): Pick<AuditTrail, 'command'> {
  return new AuditTrail(new AuditRepo(db), () => false, { info: () => undefined });
}

/**
 * One entry of a command that keeps no database connection while it works (`toolport backup`, `restore`), written
 * to the database it opened for it. False when it could not be written there (a database from before the audit
 * trail, as a restored old backup may be, until the server migrates it).
 */
export async function recordCommandIn(db: Db, a: CommandAction): Promise<boolean> {
  try {
    await createCommandAudit(db).command(a);
    return true;
  } catch {
    return false;
  }
}
