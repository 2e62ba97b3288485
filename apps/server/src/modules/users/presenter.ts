import type { LoginMethod, PublicUser, SelfUser } from '@toolport/contract';
import type { UserRow } from '../../db/schema.js';
import type { Secrets } from '../../infra/secrets.js';

export interface Identity {
  provider: string;
  provider_user_id: string;
}

/** A password user signs in with a password; a user without one signed up through a provider. */
export function loginMethodOf(row: UserRow, identities: Identity[]): LoginMethod {
  if (row.password_hash) return 'password';
  const first = identities[0]?.provider;
  return first === 'github' || first === 'google' || first === 'wechat' ? first : 'password';
}

/** The API shape of a user: never the password hash or the API key. */
export function toPublicUser(row: UserRow, identities: Identity[]): PublicUser {
  const idOf = (p: string) => identities.find((i) => i.provider === p)?.provider_user_id ?? '';
  return {
    id: row.id,
    username: row.username,
    display_name: row.display_name,
    email: row.email,
    role: row.role,
    status: row.status,
    github_id: idOf('github'),
    google_id: idOf('google'),
    wechat_id: idOf('wechat'),
    login_method: loginMethodOf(row, identities),
    created_at: row.created_at,
  };
}

/** The caller's own profile, with its API key decrypted for display. */
export function toSelfUser(row: UserRow, identities: Identity[], secrets: Secrets): SelfUser {
  return { ...toPublicUser(row, identities), token: secrets.decrypt(row.api_key_enc) };
}
