import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Answer,
  defaultGitHubUser,
  defaultGoogleUser,
  type FakeGitHubUser,
  type FakeGoogleUser,
  fakeIdToken,
  githubApiError,
  githubUserJson,
  googleUserinfoJson,
  json,
  type Refusal,
  readBody,
  refusals,
  write,
} from './fake-oauth-wire.js';

export { defaultGitHubUser, defaultGoogleUser, type FakeGitHubUser, type FakeGoogleUser } from './fake-oauth-wire.js';

/**
 * A fake GitHub and a fake Google on one loopback server, speaking their real wire formats:
 * GitHub's web flow (/login/oauth/authorize, /login/oauth/access_token) under /github and its REST
 * API (/user, /user/emails) under /github-api; Google's authorize page, token endpoint and OpenID
 * userinfo under /google. The authorize pages approve at once as the configured user and redirect
 * back with code and state, as the real ones do after the user clicks "Authorize".
 *
 * It checks what the real providers check: client id and secret, the return address, single-use
 * codes, and PKCE (S256 or plain) when the authorize request carried a challenge. Dependency-free
 * and independent of the server code, so the Playwright suites can start it too.
 */

export type FakeProvider = 'github' | 'google';

export interface FakeClient {
  clientId: string;
  clientSecret: string;
}

export interface FakeOAuthRequest {
  provider: FakeProvider;
  method: string;
  /** Path below the provider's prefix. */
  path: string;
  query: Record<string, string>;
  /** Form or JSON body fields, as strings. */
  form: Record<string, string>;
  authorization: string | undefined;
}

export interface FakeOAuth {
  url: string;
  /** The environment that points a Toolport server at this fake. */
  env: Record<string, string>;
  /** The OAuth app registered with each fake provider. */
  clients: Record<FakeProvider, FakeClient>;
  /** Who approves on GitHub's authorize page from now on. */
  setGitHubUser(user: FakeGitHubUser): void;
  /** Who approves on Google's consent page from now on. */
  setGoogleUser(user: FakeGoogleUser): void;
  /** The next visit to the provider's authorize page is declined: `?error=<error>&state=…`. */
  denyNext(provider: FakeProvider, error?: string): void;
  requests: FakeOAuthRequest[];
  /** Default users again, no pending denial, an empty request log. */
  reset(): void;
  close(): Promise<void>;
}

interface IssuedCode {
  provider: FakeProvider;
  clientId: string;
  redirectUri: string;
  challenge: string | undefined;
  challengeMethod: string;
  user: FakeGitHubUser | FakeGoogleUser;
  used: boolean;
}

type Fields = Record<string, string>;

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export async function startFakeOAuth(): Promise<FakeOAuth> {
  const clients: Record<FakeProvider, FakeClient> = {
    github: { clientId: 'Iv1.fakegithubclient', clientSecret: 'fake-github-client-secret-0123456789' },
    google: { clientId: '1234567890-fake.apps.googleusercontent.com', clientSecret: 'GOCSPX-fake-google-client-secret' },
  };
  const users = { github: defaultGitHubUser(), google: defaultGoogleUser() };
  const denials = new Map<FakeProvider, string>();
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, FakeGitHubUser | FakeGoogleUser>();
  const requests: FakeOAuthRequest[] = [];

  /** The authorize page, approved (or declined) at once. */
  function authorize(provider: FakeProvider, query: Fields): Answer {
    if (query.client_id !== clients[provider].clientId)
      return json(400, { error: 'invalid_client', error_description: 'Unknown client_id' });
    if (!query.redirect_uri) return json(400, { error: 'invalid_request', error_description: 'Missing redirect_uri' });
    if (provider === 'google' && query.response_type !== 'code') {
      return json(400, { error: 'unsupported_response_type', error_description: 'response_type must be code' });
    }
    const back = new URL(query.redirect_uri);
    const denial = denials.get(provider);
    denials.delete(provider);
    if (denial) {
      back.searchParams.set('error', denial);
      if (provider === 'github') back.searchParams.set('error_description', 'The user has denied your application access.');
    } else {
      const code = provider === 'github' ? randomBytes(10).toString('hex') : `4/0A${randomBytes(24).toString('base64url')}`;
      codes.set(code, {
        provider,
        clientId: query.client_id,
        redirectUri: query.redirect_uri,
        challenge: query.code_challenge,
        challengeMethod: query.code_challenge_method ?? 'plain',
        user: structuredClone(users[provider]),
        used: false,
      });
      back.searchParams.set('code', code);
    }
    if (query.state !== undefined) back.searchParams.set('state', query.state);
    if (provider === 'google' && !denial) {
      // Google adds these to every return; a client must ignore what it does not know.
      back.searchParams.set('scope', 'email profile openid https://www.googleapis.com/auth/userinfo.email');
      back.searchParams.set('authuser', '0');
      back.searchParams.set('prompt', 'consent');
    }
    return { status: 302, location: back.toString() };
  }

  /** Why a code cannot be exchanged; undefined when it can. Any attempt burns the code, as on the real providers. */
  function refusal(provider: FakeProvider, form: Fields, issued: IssuedCode | undefined): Refusal | undefined {
    const words = refusals[provider];
    if (form.client_id !== clients[provider].clientId || form.client_secret !== clients[provider].clientSecret) return words.client;
    if (!issued || issued.used || issued.provider !== provider || issued.clientId !== form.client_id) return words.code;
    issued.used = true;
    // GitHub falls back to the registered address when none is sent; Google requires it.
    const sentUri = form.redirect_uri ?? (provider === 'github' ? issued.redirectUri : undefined);
    if (sentUri !== issued.redirectUri) return words.redirect;
    if (issued.challenge === undefined) return undefined;
    const verifier = form.code_verifier ?? '';
    const matches = issued.challengeMethod === 'S256' ? s256(verifier) === issued.challenge : verifier === issued.challenge;
    return verifier && matches ? undefined : words.verifier;
  }

  function exchange(provider: FakeProvider, form: Fields, accept: string): Answer {
    if (provider === 'google' && form.grant_type !== 'authorization_code') {
      return json(400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${form.grant_type ?? ''}` });
    }
    const issued = form.code ? codes.get(form.code) : undefined;
    const refused = refusal(provider, form, issued);
    const accessToken = `${provider === 'github' ? 'gho_' : 'ya29.'}${randomBytes(20).toString('base64url')}`;
    if (!refused && issued) accessTokens.set(accessToken, issued.user);
    if (provider === 'github') {
      // GitHub answers errors with 200 too, and form-encoded unless asked for JSON.
      const body: Fields = refused
        ? { error: refused.error, error_description: refused.description, error_uri: 'https://docs.github.com/apps/oauth-apps' }
        : { access_token: accessToken, token_type: 'bearer', scope: 'user:email' };
      return accept.includes('application/json') ? json(200, body) : { status: 200, form: body };
    }
    if (refused)
      return json(refused.error === 'invalid_client' ? 401 : 400, { error: refused.error, error_description: refused.description });
    return json(200, {
      access_token: accessToken,
      expires_in: 3599,
      scope: 'openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile',
      token_type: 'Bearer',
      id_token: fakeIdToken(issued?.user as FakeGoogleUser, form.client_id ?? ''),
    });
  }

  function bearerUser(req: IncomingMessage): FakeGitHubUser | FakeGoogleUser | undefined {
    const match = /^(?:Bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    return match?.[1] ? accessTokens.get(match[1]) : undefined;
  }

  function githubApi(path: string, req: IncomingMessage): Answer {
    if (!req.headers.authorization) return githubApiError(401, 'Requires authentication');
    const user = bearerUser(req);
    if (!user || !('login' in user)) return githubApiError(401, 'Bad credentials');
    if (path === '/user') return json(200, githubUserJson(user));
    if (path === '/user/emails') return json(200, user.emails);
    return githubApiError(404, 'Not Found');
  }

  function googleUserinfo(req: IncomingMessage): Answer {
    const user = bearerUser(req);
    if (user && 'sub' in user) return json(200, googleUserinfoJson(user));
    const challenge = 'Bearer realm="https://accounts.google.com/", error="invalid_token"';
    return json(401, { error: 'invalid_request', error_description: 'Invalid Credentials' }, { 'www-authenticate': challenge });
  }

  async function answer(req: IncomingMessage): Promise<Answer> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const form = req.method === 'POST' ? await readBody(req) : {};
    const [prefix = '', ...rest] = url.pathname.slice(1).split('/');
    const path = `/${rest.join('/')}`;
    const route = `${req.method} ${prefix}${path}`;
    requests.push({
      provider: prefix === 'google' ? 'google' : 'github',
      method: req.method ?? 'GET',
      path,
      query,
      form,
      authorization: req.headers.authorization,
    });

    if (route === 'GET github/login/oauth/authorize') return authorize('github', query);
    // GitHub reads the token request's parameters from the query string as well as the body.
    if (route === 'POST github/login/oauth/access_token') return exchange('github', { ...query, ...form }, req.headers.accept ?? '');
    if (req.method === 'GET' && prefix === 'github-api') return githubApi(path, req);
    if (route === 'GET google/o/oauth2/v2/auth') return authorize('google', query);
    if (route === 'POST google/token') return exchange('google', form, req.headers.accept ?? '');
    if (route === 'GET google/v1/userinfo') return googleUserinfo(req);
    return json(404, { error: 'not_found', path: url.pathname });
  }

  const server = createServer((req, res) => {
    answer(req).then(
      (a) => write(res, a),
      (err: unknown) => write(res, json(500, { error: 'fake_failure', message: String(err) })),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    env: {
      GITHUB_BASE_URL: `${base}/github`,
      GITHUB_API_URL: `${base}/github-api`,
      GOOGLE_AUTH_URL: `${base}/google/o/oauth2/v2/auth`,
      GOOGLE_TOKEN_URL: `${base}/google/token`,
      GOOGLE_USERINFO_URL: `${base}/google/v1/userinfo`,
    },
    clients,
    setGitHubUser(user) {
      users.github = structuredClone(user);
    },
    setGoogleUser(user) {
      users.google = structuredClone(user);
    },
    denyNext(provider, error = 'access_denied') {
      denials.set(provider, error);
    },
    requests,
    reset() {
      users.github = defaultGitHubUser();
      users.google = defaultGoogleUser();
      denials.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
