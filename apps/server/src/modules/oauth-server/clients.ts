import { type FetchLike, OutboundError } from '../../infra/outbound.js';
import { randomToken } from '../../infra/secrets.js';
import { OAuthError } from './errors.js';
import type { ClientRow, OAuthServerRepo } from './repo.js';

/** A client as the flow sees it, from a registration or a Client ID Metadata Document. */
export interface OAuthClient {
  clientId: string;
  name: string;
  logoUri: string;
  redirectUris: string[];
}

/** Client metadata is small; a document or registration larger than this is refused. */
export const MAX_METADATA_BYTES = 16 * 1024;
const MAX_REDIRECT_URIS = 10;
const FETCH_TIMEOUT_MS = 5000;
/** How long a fetched metadata document is trusted without its own Cache-Control: an hour, at most a day. */
const DEFAULT_CACHE_MS = 60 * 60_000;
const MAX_CACHE_MS = 24 * 60 * 60_000;
const MIN_CACHE_MS = 60_000;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const metadataError = (detail: string) => new OAuthError('invalid_client_metadata', 'oauth_server.invalid_metadata', { detail });

/** A redirect URI a client may register: https, http on loopback (RFC 8252 §7.3), or a private-use scheme (§7.1). */
function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2000)
    throw new OAuthError('invalid_redirect_uri', 'oauth_server.bad_redirect_uri', { uri: String(value).slice(0, 100) });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError('invalid_redirect_uri', 'oauth_server.bad_redirect_uri', { uri: value.slice(0, 100) });
  }
  const scheme = url.protocol;
  const bad =
    url.hash !== '' ||
    ['javascript:', 'data:', 'file:', 'blob:', 'vbscript:', 'about:'].includes(scheme) ||
    (scheme === 'http:' && !LOOPBACK_HOSTS.has(url.hostname));
  if (bad) throw new OAuthError('invalid_redirect_uri', 'oauth_server.bad_redirect_uri', { uri: value.slice(0, 100) });
  return value;
}

/** Client metadata (RFC 7591 §2), as a registration or a metadata document carries it; throws invalid_client_metadata. */
export function parseClientMetadata(body: unknown): { name: string; clientUri: string; logoUri: string; redirectUris: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('not a JSON object');
  if (JSON.stringify(body).length > MAX_METADATA_BYTES) throw metadataError(`larger than ${MAX_METADATA_BYTES} bytes`);
  const m = body as Record<string, unknown>;
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'oauth_server.redirect_uris_required');
  if (uris.length > MAX_REDIRECT_URIS) throw metadataError(`more than ${MAX_REDIRECT_URIS} redirect_uris`);
  const redirectUris = uris.map(checkRedirectUri);
  const text = (key: string, max: number): string => {
    const v = m[key];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string' || v.length > max) throw metadataError(`${key} must be text of at most ${max} characters`);
    return v.trim();
  };
  const name = text('client_name', 200);
  const clientUri = text('client_uri', 2000);
  const logoUri = text('logo_uri', 2000);
  // Shown as an image on the consent page: https only, so a page served over https shows no mixed content.
  if (logoUri && !/^https:\/\/[^\s]+$/i.test(logoUri)) throw metadataError('logo_uri must be an https URL');
  if (clientUri && !/^https?:\/\/[^\s]+$/i.test(clientUri)) throw metadataError('client_uri must be an http(s) URL');
  const method = m.token_endpoint_auth_method;
  // Only public clients: secrets issued to software that runs on users' machines are not secret.
  if (method !== undefined && method !== 'none')
    throw metadataError('token_endpoint_auth_method must be "none" (public clients with PKCE)');
  const grants = m.grant_types;
  if (grants !== undefined && (!Array.isArray(grants) || !grants.includes('authorization_code')))
    throw metadataError('grant_types must include authorization_code');
  const responses = m.response_types;
  if (responses !== undefined && (!Array.isArray(responses) || !responses.includes('code')))
    throw metadataError('response_types must include code');
  return { name, clientUri, logoUri, redirectUris };
}

/** A client_id that names a metadata document: https with a path, or http on loopback (development only). */
export function isMetadataUrl(clientId: string): boolean {
  if (!/^https?:\/\//i.test(clientId)) return false;
  try {
    const url = new URL(clientId);
    if (url.pathname === '/' || url.hash || url.username || url.password) return false;
    return url.protocol === 'https:' || LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

const toClient = (row: ClientRow): OAuthClient => ({
  clientId: row.client_id,
  name: row.client_name || new URL(row.client_id.startsWith('http') ? row.client_id : 'https://client.invalid').host,
  logoUri: row.logo_uri,
  redirectUris: JSON.parse(row.redirect_uris) as string[],
});

/**
 * Who a client is: dynamically registered clients (RFC 7591) from the database, and clients that
 * identify by the URL of their Client ID Metadata Document, fetched under the outbound rules
 * (infra/outbound.ts: time, size, same-origin redirects, private addresses per preference) and cached
 * in the database so every replica shares one copy.
 */
export class OAuthClients {
  constructor(
    private readonly repo: OAuthServerRepo,
    private readonly fetch: FetchLike,
  ) {}

  async register(body: unknown, now: number): Promise<Record<string, unknown>> {
    const meta = parseClientMetadata(body);
    const clientId = `tpc_${randomToken(18)}`;
    await this.repo.saveClient({
      client_id: clientId,
      kind: 'registered',
      client_name: meta.name,
      client_uri: meta.clientUri,
      logo_uri: meta.logoUri,
      redirect_uris: JSON.stringify(meta.redirectUris),
      created_at: now,
      expires_at: 0,
    });
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(now / 1000),
      client_name: meta.name || undefined,
      client_uri: meta.clientUri || undefined,
      logo_uri: meta.logoUri || undefined,
      redirect_uris: meta.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /** The client, or invalid_client (unknown id, unreachable or invalid metadata document). */
  async resolve(clientId: string, now: number): Promise<OAuthClient> {
    if (!clientId || clientId.length > 2048) throw new OAuthError('invalid_client', 'oauth_server.unknown_client');
    const row = await this.repo.client(clientId);
    if (row?.kind === 'registered') return toClient(row);
    if (!isMetadataUrl(clientId)) throw new OAuthError('invalid_client', 'oauth_server.unknown_client');
    if (row && row.expires_at > now) return toClient(row);
    return toClient(await this.fetchDocument(clientId, now));
  }

  private async fetchDocument(clientId: string, now: number): Promise<ClientRow> {
    let response: Response;
    try {
      response = await this.fetch(clientId, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (err) {
      if (err instanceof OutboundError)
        throw new OAuthError('invalid_client', err.key, err.params, 401, typeof err.detail === 'string' ? err.detail : err.detail.message);
      throw new OAuthError('invalid_client', 'oauth_server.metadata_unreachable', { url: clientId });
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new OAuthError('invalid_client', 'oauth_server.metadata_unreachable', { url: clientId }, 401, `HTTP ${response.status}`);
    }
    const text = await readLimited(response, MAX_METADATA_BYTES).catch(() => undefined);
    if (text === undefined)
      throw new OAuthError(
        'invalid_client',
        'oauth_server.invalid_metadata',
        { detail: `larger than ${MAX_METADATA_BYTES} bytes or unreadable` },
        401,
      );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new OAuthError('invalid_client', 'oauth_server.invalid_metadata', { detail: 'not JSON' }, 401);
    }
    if ((body as Record<string, unknown> | null)?.client_id !== clientId)
      throw new OAuthError('invalid_client', 'oauth_server.invalid_metadata', { detail: 'client_id does not equal the document URL' }, 401);
    let meta: ReturnType<typeof parseClientMetadata>;
    try {
      meta = parseClientMetadata(body);
    } catch (err) {
      // At the authorize and token endpoints an unusable document means an unusable client.
      if (err instanceof OAuthError) throw new OAuthError('invalid_client', err.key, err.params, 401);
      throw err;
    }
    const row: ClientRow = {
      client_id: clientId,
      kind: 'metadata',
      client_name: meta.name,
      client_uri: meta.clientUri,
      logo_uri: meta.logoUri,
      redirect_uris: JSON.stringify(meta.redirectUris),
      created_at: now,
      expires_at: now + cacheMs(response.headers.get('cache-control')),
    };
    await this.repo.saveClient(row);
    return row;
  }
}

function cacheMs(header: string | null): number {
  const maxAge = header ? /max-age=(\d+)/i.exec(header)?.[1] : undefined;
  if (maxAge === undefined) return DEFAULT_CACHE_MS;
  return Math.min(MAX_CACHE_MS, Math.max(MIN_CACHE_MS, Number(maxAge) * 1000));
}

/** The body as text, refused (undefined) once it passes `limit` bytes: a huge document is never held whole. */
async function readLimited(response: Response, limit: number): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
