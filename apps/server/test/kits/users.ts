import { signAccessToken } from '../../src/http/access-tokens.js';
import { bearer, type TestApp } from '../harness.js';

export interface MadeUser {
  id: number;
  username: string;
  password: string;
  token: string;
}

let counter = 0;

/**
 * An access token as sign-in would issue it. The users suites make dozens of users; signing in
 * each one through the API would trip the per-IP sign-in rate limit.
 */
export async function tokenOf(t: TestApp, userId: number): Promise<string> {
  const row = await t.ctx.usersRepo.byId(userId);
  if (!row) throw new Error(`no user ${userId}`);
  return signAccessToken(t.ctx.secrets.jwtKey, { userId, authVersion: row.auth_version });
}

/** Creates a user through `POST /api/user` as `actorToken` and returns it with an access token. */
export async function makeUser(
  t: TestApp,
  actorToken: string,
  opts: { username?: string; role?: 1 | 10; email?: string } = {},
): Promise<MadeUser> {
  counter += 1;
  const username = opts.username ?? `u${counter}_${Math.random().toString(36).slice(2, 7)}`;
  const password = 'password-1234';
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/user',
    headers: bearer(actorToken),
    payload: { username, password, display_name: `Name of ${username}`, email: opts.email ?? '', role: opts.role ?? 1 },
  });
  if (res.statusCode !== 201) throw new Error(`create user failed: ${res.statusCode} ${res.body}`);
  const id = res.json().data.id as number;
  return { id, username, password, token: await tokenOf(t, id) };
}

/** A user who signed up through GitHub: no password, one provider identity. */
export async function makeOAuthUser(t: TestApp, githubId: string): Promise<{ id: number; token: string }> {
  const now = Date.now();
  const row = await t.ctx.db
    .insertInto('users')
    .values({
      username: `gh_${githubId}`,
      display_name: 'From GitHub',
      email: '',
      password_hash: null,
      role: 1,
      status: 1,
      api_key_hash: `hash-${githubId}`,
      api_key_enc: t.ctx.secrets.encrypt(`tpk_oauth_${githubId}`),
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await t.ctx.db
    .insertInto('provider_identities')
    .values({ user_id: row.id, provider: 'github', provider_user_id: githubId, email: '', created_at: now })
    .execute();
  return { id: row.id, token: await tokenOf(t, row.id) };
}
