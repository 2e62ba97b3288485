import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { bearer } from '../harness.js';

export const fixtureServer = path.join(import.meta.dirname, '../fixtures/fixture-mcp-server.mjs');
export const REDIRECT = 'http://127.0.0.1:8976/callback';

/**
 * An MCP client's side of the OAuth flow, in memory, as the official SDK (v1) asks an application to
 * provide it: the browser step is recorded (`authorizationUrl`) for the test to play the user's part.
 */
export class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  constructor(
    /** A Client ID Metadata Document's URL to use as client_id instead of registering. */
    metadataUrl?: string,
  ) {
    if (metadataUrl) this.info = { client_id: metadataUrl };
  }

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP Client',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }
  state(): string {
    return 'state-123';
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * The user's part in the browser, through the same API the consent page calls: open the authorize
 * URL (it redirects to the console's consent page), read the request, answer Allow or Deny, and
 * return the redirect URI the browser is sent to.
 */
export async function consent(authorizationUrl: URL | string, userToken: string, allow = true): Promise<URL> {
  const url = new URL(authorizationUrl);
  const res = await fetch(url, { redirect: 'manual' });
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  const location = new URL(String(res.headers.get('location')));
  if (location.pathname !== '/oauth/consent') return location;
  const id = location.searchParams.get('request') ?? '';
  const api = `${url.origin}/api/oauth-server/requests/${id}`;
  const view = await fetch(api, { headers: bearer(userToken) });
  if (view.status !== 200) throw new Error(`consent view answered ${view.status}: ${await view.text()}`);
  const decided = await fetch(api, {
    method: 'POST',
    headers: { ...bearer(userToken), 'content-type': 'application/json' },
    body: JSON.stringify({ allow }),
  });
  if (decided.status !== 200) throw new Error(`decision answered ${decided.status}: ${await decided.text()}`);
  return new URL(((await decided.json()) as { data: { redirect_to: string } }).data.redirect_to);
}

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** A loopback server for Client ID Metadata Documents: `documents` by path, changed by the test at will. */
export async function metadataHost(): Promise<{
  url: string;
  documents: Map<string, { status?: number; body: string; type?: string }>;
  close(): Promise<void>;
}> {
  const documents = new Map<string, { status?: number; body: string; type?: string }>();
  const server: Server = createServer((req, res) => {
    const doc = documents.get(req.url ?? '');
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(doc.status ?? 200, { 'content-type': doc.type ?? 'application/json' }).end(doc.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, documents, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
