import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Role, UserStatus } from '@toolport/contract';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { hashPassword } from '../../infra/passwords.js';
import { randomToken, type Secrets } from '../../infra/secrets.js';
import { issueApiKey } from './api-keys.js';
import type { UsersRepo } from './repo.js';

export const SUPER_ADMIN_USERNAME = 'root';

/**
 * Creates the super admin `root` on the first start. Its password is ADMIN_PASSWORD, or a random
 * one printed once and written to DATA_DIR/initial-admin-password (mode 600). Safe when several
 * replicas start at once: the unique username decides, the losers do nothing.
 */
/** What creating the first super admin reads and writes. */
export interface BootstrapDeps {
  usersRepo: UsersRepo;
  config: Pick<Config, 'adminPassword' | 'dataDir'>;
  secrets: Secrets;
  logger: Logger;
}

export async function ensureSuperAdmin(deps: BootstrapDeps, print: (line: string) => void = console.log): Promise<void> {
  if (await deps.usersRepo.byUsername(SUPER_ADMIN_USERNAME)) return;
  const generated = deps.config.adminPassword ? undefined : randomToken(15);
  const password = deps.config.adminPassword ?? generated ?? '';
  const key = issueApiKey(deps.secrets);
  const now = Date.now();
  try {
    await deps.usersRepo.insert({
      username: SUPER_ADMIN_USERNAME,
      display_name: 'Root',
      email: '',
      password_hash: await hashPassword(password),
      role: Role.SuperAdmin,
      status: UserStatus.Enabled,
      api_key_hash: key.hash,
      api_key_enc: key.encrypted,
      created_at: now,
      updated_at: now,
    });
  } catch (err) {
    if (await deps.usersRepo.byUsername(SUPER_ADMIN_USERNAME)) return;
    throw err;
  }
  if (generated) {
    const file = path.join(deps.config.dataDir, 'initial-admin-password');
    writeFileSync(file, `${generated}\n`, { mode: 0o600 });
    print(`Created the super admin "root" with password: ${generated}`);
    print(`(also written to ${file}; change it after signing in)`);
  } else {
    deps.logger.info('created the super admin "root" with ADMIN_PASSWORD');
  }
}
