import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * Microsoft Entra ID's multi-tenant endpoint on loopback, speaking its wire format: the `common` (or
 * `organizations`) discovery document whose issuer is the template `{base}/{tenantid}/v2.0`, the JWKS with
 * Entra's `issuer` member on each key, an authorize page that sends the browser straight back with a code, and a
 * token endpoint that answers an RS256 ID token issued by the person's own tenant (`iss` = `{base}/{tid}/v2.0`,
 * with `tid`, `oid`, `ver` 2.0, and an `email` Entra never marks verified).
 */
export interface EntraPerson {
  tid: string;
  sub: string;
  name: string;
  email?: string;
  preferred_username?: string;
}

export interface EntraFake {
  base: string;
  clientId: string;
  clientSecret: string;
  /** The person who "signs in" at the authorize page. */
  signInAs(person: EntraPerson): void;
  /** Changes the claims of the next ID tokens after they are built (before signing). */
  rewrite: ((claims: Record<string, unknown>) => Record<string, unknown>) | undefined;
  close(): Promise<void>;
}

export async function startEntraFake(opts: { tenantPath?: 'common' | 'organizations' } = {}): Promise<EntraFake> {
  const tenantPath = opts.tenantPath ?? 'common';
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  const clientId = randomUUID();
  const clientSecret = `entra-secret-${randomUUID()}`;
  const codes = new Map<string, { nonce: string; person: EntraPerson }>();
  let person: EntraPerson | undefined;

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', base);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === `/${tenantPath}/v2.0/.well-known/openid-configuration`) {
      return json(200, {
        token_endpoint: `${base}/${tenantPath}/oauth2/v2.0/token`,
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        jwks_uri: `${base}/${tenantPath}/discovery/v2.0/keys`,
        response_modes_supported: ['query', 'fragment', 'form_post'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        issuer: `${base}/{tenantid}/v2.0`,
        authorization_endpoint: `${base}/${tenantPath}/oauth2/v2.0/authorize`,
        userinfo_endpoint: `${base}/oidc/userinfo`,
        claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'name', 'tid', 'oid', 'email', 'preferred_username', 'ver'],
        tenant_region_scope: null,
      });
    }
    if (url.pathname === `/${tenantPath}/discovery/v2.0/keys`) {
      const jwk = await exportJWK(publicKey);
      return json(200, { keys: [{ ...jwk, kid, use: 'sig', issuer: `${base}/{tenantid}/v2.0` }] });
    }
    if (url.pathname === `/${tenantPath}/oauth2/v2.0/authorize`) {
      if (!person) return json(400, { error: 'invalid_request', error_description: 'nobody signs in' });
      const code = randomUUID();
      codes.set(code, { nonce: url.searchParams.get('nonce') ?? '', person });
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === `/${tenantPath}/oauth2/v2.0/token` && req.method === 'POST') {
      let text = '';
      for await (const chunk of req) text += String(chunk);
      const form = new URLSearchParams(text);
      const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');
      const [id, secret] = basic ? basic.split(':').map(decodeURIComponent) : [form.get('client_id'), form.get('client_secret')];
      if (id !== clientId || secret !== clientSecret) return json(401, { error: 'invalid_client', error_description: 'AADSTS7000215' });
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (!grant) return json(400, { error: 'invalid_grant', error_description: 'AADSTS70008: the code has expired or was used' });
      const now = Math.floor(Date.now() / 1000);
      const p = grant.person;
      let claims: Record<string, unknown> = {
        aud: clientId,
        iss: `${base}/${p.tid}/v2.0`,
        iat: now,
        nbf: now,
        exp: now + 3600,
        name: p.name,
        nonce: grant.nonce,
        oid: randomUUID(),
        preferred_username: p.preferred_username ?? p.email ?? '',
        sub: p.sub,
        tid: p.tid,
        ver: '2.0',
        ...(p.email ? { email: p.email } : {}),
      };
      if (state.rewrite) claims = state.rewrite(claims);
      const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(privateKey);
      return json(200, {
        token_type: 'Bearer',
        scope: 'openid profile email',
        expires_in: 3600,
        access_token: randomUUID(),
        id_token: idToken,
      });
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const state: EntraFake = {
    base,
    clientId,
    clientSecret,
    rewrite: undefined,
    signInAs: (p) => {
      person = p;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return state;
}
