import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Secrets } from '../../infra/secrets.js';
import { ensureSuperAdmin } from './bootstrap.js';
import { UsersRepo } from './repo.js';
import { userRoutes } from './routes.js';
import { type RefreshTokenRevoker, UsersService } from './service.js';

export { hashApiKey, issueApiKey } from './api-keys.js';
export { mayChangeSignIn } from './manage-rules.js';
export { toPublicUser } from './presenter.js';
export type { UsersRepo } from './repo.js';
export type { RefreshTokenRevoker, UsersService } from './service.js';

export interface UsersModuleDeps {
  db: Db;
  /** Signs a user out everywhere (a new password, a disabled account): the auth module's store. */
  refreshTokens: RefreshTokenRevoker;
  secrets: Secrets;
  /** Every change to a user is announced as `user.changed`. */
  events: ConfigEvents;
  /** ADMIN_PASSWORD, and DATA_DIR for the generated one. */
  config: Pick<Config, 'adminPassword' | 'dataDir'>;
  logger: Logger;
}

export interface UsersModule {
  /** The users table, read by sign-in, the principals and the service catalog. */
  repo: UsersRepo;
  service: UsersService;
  /** Creates the super admin `root` on the first start; `print` shows a generated password. */
  ensureSuperAdmin(print?: (line: string) => void): Promise<void>;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Users, their profiles, passwords and API keys, and what an administrator may do to whom. */
export function createUsersModule(deps: UsersModuleDeps): UsersModule {
  const repo = new UsersRepo(deps.db);
  const service = new UsersService({ usersRepo: repo, refreshTokens: deps.refreshTokens, secrets: deps.secrets, events: deps.events });
  return {
    repo,
    service,
    ensureSuperAdmin: (print) =>
      ensureSuperAdmin({ usersRepo: repo, config: deps.config, secrets: deps.secrets, logger: deps.logger }, print),
    routes: (api) => userRoutes(api, service),
    close: async () => undefined,
  };
}
