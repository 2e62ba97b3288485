import { z } from 'zod';
import type { ProviderClient } from './provider-client.js';
import { asRecord, badAnswer, callProvider, refused, USER_AGENT } from './provider-http.js';

const LABEL = 'Google';

const UserInfo = z.object({
  sub: z.string().min(1),
  email: z.string().optional(),
  // Google's OpenID userinfo sends a boolean; older endpoints sent the string "true".
  email_verified: z.union([z.boolean(), z.string()]).optional(),
  name: z.string().optional(),
});

/**
 * Google's OpenID Connect authorization code flow with PKCE. Who signed in is read from the
 * userinfo endpoint with the access token, which came straight from Google over TLS, so the
 * id_token's signature need not be checked (OpenID Connect Core 3.1.3.7).
 */
export function googleClient(urls: { authUrl: string; tokenUrl: string; userinfoUrl: string }): ProviderClient {
  return {
    label: LABEL,

    authorizeUrl(req) {
      const url = new URL(urls.authUrl);
      url.search = new URLSearchParams({
        client_id: req.clientId,
        redirect_uri: req.redirectUri,
        response_type: 'code',
        scope: 'openid email profile',
        state: req.state,
        code_challenge: req.codeChallenge,
        code_challenge_method: 'S256',
      }).toString();
      return url.toString();
    },

    async exchangeCode(req) {
      const answer = await callProvider(LABEL, urls.tokenUrl, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: req.code,
          client_id: req.clientId,
          client_secret: req.clientSecret,
          redirect_uri: req.redirectUri,
          code_verifier: req.codeVerifier,
        }),
      });
      const body = asRecord(answer.body);
      if (body.error !== undefined) throw refused(LABEL, body.error, body.error_description);
      if (answer.status !== 200 || typeof body.access_token !== 'string' || !body.access_token) {
        throw badAnswer(LABEL, `HTTP ${answer.status} without an access token`);
      }
      return body.access_token;
    },

    async fetchProfile(token) {
      const answer = await callProvider(LABEL, urls.userinfoUrl, {
        headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'user-agent': USER_AGENT },
      });
      const parsed = UserInfo.safeParse(answer.body);
      if (answer.status !== 200 || !parsed.success) throw badAnswer(LABEL, `HTTP ${answer.status} from userinfo`);
      const info = parsed.data;
      const verified = info.email_verified === true || info.email_verified === 'true';
      const email = verified && info.email ? info.email : '';
      return {
        id: info.sub,
        login: email ? (email.split('@')[0] ?? '') : (info.name ?? ''),
        displayName: info.name || email || `Google user ${info.sub.slice(-6)}`,
        email,
      };
    },
  };
}
