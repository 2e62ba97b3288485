import { z } from 'zod';
import type { ProviderClient } from './provider-client.js';
import { asRecord, badAnswer, callProvider, joinUrl, refused, USER_AGENT } from './provider-http.js';

const LABEL = 'GitHub';

const GitHubUser = z.object({ id: z.number().int(), login: z.string().min(1), name: z.string().nullish() });
const GitHubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

/**
 * GitHub's OAuth app flow: the web authorize page on the base URL (github.com), the token exchange
 * there too, the user and their addresses on the API URL (api.github.com). PKCE is sent; GitHub
 * checks it when given.
 */
export function githubClient(urls: { baseUrl: string; apiUrl: string }): ProviderClient {
  const apiHeaders = (token: string) => ({
    accept: 'application/vnd.github+json',
    authorization: `Bearer ${token}`,
    'x-github-api-version': '2022-11-28',
    'user-agent': USER_AGENT,
  });

  return {
    label: LABEL,

    authorizeUrl(req) {
      const url = new URL(joinUrl(urls.baseUrl, '/login/oauth/authorize'));
      url.search = new URLSearchParams({
        client_id: req.clientId,
        redirect_uri: req.redirectUri,
        scope: 'user:email',
        state: req.state,
        code_challenge: req.codeChallenge,
        code_challenge_method: 'S256',
      }).toString();
      return url.toString();
    },

    async exchangeCode(req) {
      const answer = await callProvider(LABEL, joinUrl(urls.baseUrl, '/login/oauth/access_token'), {
        method: 'POST',
        // Without Accept: application/json GitHub answers form-encoded.
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
        body: new URLSearchParams({
          client_id: req.clientId,
          client_secret: req.clientSecret,
          code: req.code,
          redirect_uri: req.redirectUri,
          code_verifier: req.codeVerifier,
        }),
      });
      const body = asRecord(answer.body);
      // GitHub reports a bad or used code with HTTP 200 and an `error` field.
      if (body.error !== undefined) throw refused(LABEL, body.error, body.error_description);
      if (answer.status !== 200 || typeof body.access_token !== 'string' || !body.access_token) {
        throw badAnswer(LABEL, `HTTP ${answer.status} without an access token`);
      }
      return body.access_token;
    },

    async fetchProfile(token) {
      const user = await callProvider(LABEL, joinUrl(urls.apiUrl, '/user'), { headers: apiHeaders(token) });
      const parsed = GitHubUser.safeParse(user.body);
      if (user.status !== 200 || !parsed.success) throw badAnswer(LABEL, `HTTP ${user.status} from /user`);
      const emails = await callProvider(LABEL, joinUrl(urls.apiUrl, '/user/emails'), { headers: apiHeaders(token) });
      // A GitHub App without the email permission answers 403/404 here: the account simply has no address.
      const list = emails.status === 200 ? GitHubEmails.safeParse(emails.body) : undefined;
      const primary = list?.success ? list.data.find((e) => e.primary && e.verified) : undefined;
      return {
        id: String(parsed.data.id),
        login: parsed.data.login,
        displayName: parsed.data.name || parsed.data.login,
        email: primary?.email ?? '',
      };
    },
  };
}
