import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AppParts } from '../apps/server/src/app.js';
import { signAccessToken } from '../apps/server/src/http/access-tokens.js';

/**
 * An OAuth access token for every `bench*` user, bound to one service's endpoint, made the way a client
 * gets one: register, authorize, Allow on the consent API (as the user), exchange the code.
 */
export async function oauthTokens(app: FastifyInstance, ctx: AppParts, base: string, service: string): Promise<string[]> {
  const host = new URL(base).host;
  const redirect = 'http://127.0.0.1:9/cb';
  const registered = await app.inject({
    method: 'POST',
    url: '/oauth2/register',
    headers: { host },
    payload: { redirect_uris: [redirect] },
  });
  const clientId = registered.json().client_id as string;
  const users = await ctx.db.selectFrom('users').select(['id', 'auth_version']).where('username', 'like', 'bench%').orderBy('id').execute();
  const tokens: string[] = [];
  for (const user of users) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${base}/proxy/${service}/mcp`,
    });
    const start = await app.inject({ method: 'GET', url: `/oauth2/authorize?${q}`, headers: { host } });
    const id = new URL(String(start.headers.location)).searchParams.get('request') as string;
    const session = await signAccessToken(ctx.secrets.jwtKey, { userId: user.id, authVersion: user.auth_version });
    const decided = await app.inject({
      method: 'POST',
      url: `/api/oauth-server/requests/${id}`,
      headers: { host, authorization: `Bearer ${session}` },
      payload: { allow: true },
    });
    const code = new URL(decided.json().data.redirect_to).searchParams.get('code') as string;
    const token = await app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { host },
      payload: { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: redirect },
    });
    tokens.push(token.json().access_token as string);
  }
  return tokens;
}
