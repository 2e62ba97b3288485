import { Role, UserStatus } from '@toolport/contract';
import type { NewService } from '../../src/db/schema.js';
import { signAccessToken } from '../../src/http/access-tokens.js';
import { issueApiKey } from '../../src/modules/users/api-keys.js';
import { bearer, type TestApp } from '../harness.js';

let counter = 0;

export interface SuiteUser {
  id: number;
  token: string;
  apiKey: string;
  headers: { authorization: string };
}

/**
 * A user stored directly with an access token as sign-in would issue it: these suites are about
 * services, and signing dozens of users in through the API would trip the sign-in rate limit.
 */
export async function suiteUser(t: TestApp, role: number = Role.User): Promise<SuiteUser> {
  counter += 1;
  const key = issueApiKey(t.ctx.secrets);
  const now = Date.now();
  const row = await t.ctx.usersRepo.insert({
    username: `svc_user_${counter}_${Math.random().toString(36).slice(2, 7)}`,
    display_name: '',
    email: '',
    password_hash: null,
    role,
    status: UserStatus.Enabled,
    api_key_hash: key.hash,
    api_key_enc: key.encrypted,
    created_at: now,
    updated_at: now,
  });
  const token = await signAccessToken(t.ctx.secrets.jwtKey, { userId: row.id, authVersion: row.auth_version });
  return { id: row.id, token, apiKey: key.plain, headers: bearer(token) };
}

/** The executable of the real MCP test server, as an admin would type its absolute path. */
export const everythingBin = (): string => new URL('../../../../node_modules/.bin/mcp-server-everything', import.meta.url).pathname;

/** A services row for suites that insert directly: every column with its migration default. */
export function serviceRow(values: Partial<NewService> & Pick<NewService, 'name'>): NewService {
  const now = Date.now();
  return {
    display_name: '',
    description: '',
    type: 'stdio',
    source: 'custom',
    package_name: '',
    package_manager: '',
    version: '',
    command: '',
    args_json: '[]',
    env_enc: '',
    headers_enc: '',
    env_schema_json: '[]',
    install_dir: '',
    enabled: 1,
    isolation: 'shared',
    rpd_limit: 0,
    health_status: 'unknown',
    health_details: '',
    last_health_check: null,
    tool_count: 0,
    created_at: now,
    updated_at: now,
    ...values,
  };
}
