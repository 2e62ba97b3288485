import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';

/**
 * A real OpenID Connect provider on loopback: the certified `oidc-provider` package, configured the
 * way a company directory is (one confidential client, PKCE S256 required, the `groups` claim when
 * asked for). What the real thing would show a person (the login and consent pages) is answered
 * for the account `signInAs` names, so a test can follow the redirects like a browser.
 *
 * `plain`: the claims are in the ID token. `groups`: the ID token carries only `sub` (the provider's
 * default for the code flow), so Toolport must ask userinfo for the email, name and `groups`.
 */
export interface AccountClaims {
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
  groups?: string[];
}

export interface LoopbackOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, AccountClaims>;
  /** The account that "logs in" at the provider's login page. */
  signInAs(sub: string): void;
  /** Replaces the signing key by a new one (new kid); the old one is gone from the JWKS. */
  rotateKeys(): Promise<void>;
  /** Rewrites the ID token of the next token answers (undefined: leave them alone). */
  tamper: ((idToken: string) => string) | undefined;
  /** How many times the JWKS was fetched. */
  jwksFetches: number;
  /** Revokes every grant the account gave Toolport, as an admin ending its access at the provider does. */
  revokeGrants(sub: string): Promise<void>;
  /** How many refresh token grants the provider answered (any outcome). */
  refreshes: number;
  /** While set, the token endpoint answers this HTTP status without doing anything: a provider outage. */
  outage: number | undefined;
  close(): Promise<void>;
}

export async function startLoopbackOidc(opts: { mode: 'plain' | 'groups'; redirectUris: string[] }): Promise<LoopbackOidc> {
  const accounts = new Map<string, AccountClaims>();
  const grants = new Map<string, string[]>();
  let current = '';
  const clientId = `toolport-${randomUUID().slice(0, 8)}`;
  const clientSecret = `secret-${randomUUID()}`;

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const build = async (): Promise<Provider> => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
    const configuration: Configuration = {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: opts.redirectUris,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: [jwk] },
      cookies: { keys: ['loopback-cookie-key'] },
      pkce: { required: () => true, methods: ['S256'] },
      // A company directory's confidential client gets a refresh token at every sign-in (Keycloak does).
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      claims: {
        openid: ['sub'],
        email: ['email', 'email_verified'],
        profile: ['name', 'preferred_username'],
        groups: ['groups'],
      },
      conformIdTokenClaims: opts.mode === 'groups',
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      findAccount: (_ctx, sub) => {
        const claims = accounts.get(sub);
        if (!claims) return undefined;
        return { accountId: sub, claims: () => ({ sub, ...claims }) };
      },
      // A first-party client: consent is given at once, as a company directory does for its own apps.
      loadExistingGrant: async (ctx) => {
        const session = ctx.oidc.session;
        const client = ctx.oidc.client;
        if (!session?.accountId || !client) return undefined;
        const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
        grant.addOIDCScope('openid email profile groups');
        const id = await grant.save();
        grants.set(session.accountId, [...(grants.get(session.accountId) ?? []), id]);
        return grant;
      },
    };
    const provider = new Provider(issuer, configuration);
    return provider;
  };

  let provider = await build();
  const state: LoopbackOidc = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamper: undefined,
    jwksFetches: 0,
    refreshes: 0,
    outage: undefined,
    revokeGrants: async (sub) => {
      for (const id of grants.get(sub) ?? []) await (await provider.Grant.find(id))?.destroy();
      grants.delete(sub);
    },
    signInAs: (sub) => {
      current = sub;
    },
    rotateKeys: async () => {
      provider = await build();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  server.on('request', async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/jwks') state.jwksFetches++;
    if (url.pathname.startsWith('/interaction/')) {
      // The login page, answered for `current` at once.
      try {
        await provider.interactionFinished(req, res, { login: { accountId: current } }, { mergeWithLastSubmission: false });
      } catch (err) {
        res.statusCode = 400;
        res.end(String(err));
      }
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const body = await new Promise<string>((resolve) => {
        let text = '';
        req.on('data', (c: Buffer) => {
          text += c.toString('utf8');
        });
        req.on('end', () => resolve(text));
      });
      if (new URLSearchParams(body).get('grant_type') === 'refresh_token') state.refreshes++;
      if (state.outage !== undefined) {
        res.statusCode = state.outage;
        res.setHeader('content-type', 'text/html');
        res.end('<h1>upstream unavailable</h1>');
        return;
      }
      // The body was read here: the provider reads it from the raw request again.
      Object.defineProperty(req, 'body', { value: body, configurable: true });
    }
    const tamper = state.tamper;
    if (url.pathname === '/token' && tamper) {
      const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
      res.end = ((chunk?: unknown) => {
        const text = chunk === undefined ? '' : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
        try {
          const body = JSON.parse(text) as Record<string, unknown>;
          if (typeof body.id_token === 'string') body.id_token = tamper(body.id_token);
          const out = JSON.stringify(body);
          if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(out));
          return end(out);
        } catch {
          return end(chunk);
        }
      }) as typeof res.end;
    }
    provider.callback()(req, res);
  });

  return state;
}

/** A browser at the provider: follows its redirects with a cookie jar until it is sent to `returnTo`. */
export async function visitOidcProvider(authorizeUrl: string, returnTo: string): Promise<Record<string, string>> {
  const jar = new Map<string, string>();
  let url = authorizeUrl;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a) || /^\s*max-age=0$/i.test(a));
      if (gone || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${(await res.text()).slice(0, 500)}`);
    const next = new URL(location, url);
    if (next.href.startsWith(returnTo)) return Object.fromEntries(next.searchParams);
    url = next.href;
  }
  throw new Error('too many redirects at the provider');
}

/** The callback's answer: a session, or the refusal's code and message. */
export interface SignInAnswer {
  success: boolean;
  code?: string;
  message: string;
  data?: { access_token: string; refresh_token: string; user: { id: number; username: string; display_name: string } };
}

/** The console's side of an OpenID Connect sign-in against a test app: start, the provider's pages, the return. */
export function oidcFlow(
  app: { inject: FastifyInstance['inject'] },
  server: string,
): {
  signIn(slug: string, opts?: { lang?: string; headers?: Record<string, string> }): Promise<{ status: number; body: SignInAnswer }>;
} {
  return {
    async signIn(slug, opts = {}) {
      const returnTo = `${server}/oauth/oidc/${slug}`;
      const started = await app.inject({ method: 'GET', url: `/api/oauth/oidc/${slug}/authorize`, headers: opts.headers ?? {} });
      if (started.statusCode !== 200) throw new Error(`authorize failed: ${started.statusCode} ${started.body}`);
      const cookie = String(started.headers['set-cookie'] ?? '').split(';')[0] ?? '';
      const params = await visitOidcProvider(started.json().data.url, returnTo);
      const res = await app.inject({
        method: 'GET',
        url: `/api/oauth/oidc/${slug}?${new URLSearchParams(params)}`,
        headers: { cookie, 'accept-language': opts.lang ?? 'en' },
      });
      return { status: res.statusCode, body: res.json() };
    },
  };
}
