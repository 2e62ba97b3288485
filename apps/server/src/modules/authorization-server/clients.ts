import type { FetchLike } from '../../infra/outbound.js';
import { randomToken } from '../../infra/secrets.js';
import { OAuthError } from './errors.js';
import type { ClientRow, OAuthServerRepo } from './repo.js';

/** A client as the flow sees it, from a registration or a Client ID Metadata Document. */
export interface OAuthClient {
  clientId: string;
  name: string;
  logoUri: string;
  redirectUris: string[];
  /** Registered by an admin: its redirect URIs are trusted (decision 0041). */
  admin: boolean;
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

/** Text with a lone UTF-16 surrogate: no valid UTF-8 spells it, so no store or redirect could carry it faithfully. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A redirect URI a client may register: https, http on loopback (RFC 8252 §7.3), or a private-use scheme (§7.1). */
function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2000 || LONE_SURROGATE.test(value))
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

/** The length of `value` as JSON; Infinity for a value nested too deeply to serialise (a hostile body). */
function serialisedLength(value: unknown): number {
  try {
    return JSON.stringify(value).length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Client metadata (RFC 7591 §2), as a registration or a metadata document carries it; throws invalid_client_metadata. */
export function parseClientMetadata(body: unknown): { name: string; clientUri: string; logoUri: string; redirectUris: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('not a JSON object');
  if (serialisedLength(body) > MAX_METADATA_BYTES) throw metadataError(`larger than ${MAX_METADATA_BYTES} bytes`);
  const m = body as Record<string, unknown>;
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'oauth_server.redirect_uris_required');
  if (uris.length > MAX_REDIRECT_URIS) throw metadataError(`more than ${MAX_REDIRECT_URIS} redirect_uris`);
  const redirectUris = uris.map(checkRedirectUri);
  const text = (key: string, max: number): string => {
    const v = m[key];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string' || v.length > max || LONE_SURROGATE.test(v))
      throw metadataError(`${key} must be text of at most ${max} characters`);
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
  admin: row.kind === 'admin',
});

/** What fetching metadata documents needs besides the fetch itself. */
export interface DocumentFetchOptions {
  /** Time cap of one fetch; every failed fetch is answered no sooner than this after it began. */
  timeoutMs: number;
  /** Counts fetches per client address (rate-limit.ts); undefined when the address is unknown (console calls). */
  admit?: (address: string) => Promise<number | undefined>;
  logger: { info(obj: object, msg: string): void };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Why a document could not be used: told to the log, never to the caller (one message for all). */
class Unusable extends Error {}

/**
 * Who a client is: dynamically registered clients (RFC 7591) from the database, and clients that
 * identify by the URL of their Client ID Metadata Document, fetched under the outbound rules
 * (infra/outbound.ts: the address rule for fetches strangers cause, no redirect followed, a time and a
 * size cap) and cached in the database so every replica shares one copy.
 */
export class OAuthClients {
  constructor(
    private readonly repo: OAuthServerRepo,
    private readonly fetch: FetchLike,
    private readonly opts: DocumentFetchOptions = { timeoutMs: FETCH_TIMEOUT_MS, logger: { info: () => undefined } },
  ) {}

  async register(body: unknown, now: number, kind: 'registered' | 'admin' = 'registered'): Promise<Record<string, unknown>> {
    const meta = parseClientMetadata(body);
    const clientId = `tpc_${randomToken(18)}`;
    await this.repo.saveClient({
      client_id: clientId,
      kind,
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

  /**
   * The client, or invalid_client (unknown id, unreachable or invalid metadata document). `requester`
   * is the address of an anonymous caller: a fetch it causes counts against its rate limit.
   */
  async resolve(clientId: string, now: number, requester?: string): Promise<OAuthClient> {
    if (!clientId || clientId.length > 2048) throw new OAuthError('invalid_client', 'oauth_server.unknown_client');
    const row = await this.repo.client(clientId);
    if (row?.kind === 'registered' || row?.kind === 'admin') return toClient(row);
    if (!isMetadataUrl(clientId)) throw new OAuthError('invalid_client', 'oauth_server.unknown_client');
    if (row && row.expires_at > now) return toClient(row);
    if (requester !== undefined && this.opts.admit) {
      const wait = await this.opts.admit(requester);
      if (wait !== undefined) throw new OAuthError('invalid_request', 'oauth_server.fetch_rate_limited', { seconds: wait }, 429);
    }
    return toClient(await this.fetchDocument(clientId, now));
  }

  /**
   * Fetches, checks and caches a metadata document. Every failure (refused address, connection refused,
   * time-out, a status other than 200, a redirect, a wrong type, too large, invalid) is the same
   * invalid_client, answered no sooner than the time cap after the fetch began: the caller learns
   * nothing about the address it named, in text or in timing. Why is told to the log.
   */
  private async fetchDocument(clientId: string, now: number): Promise<ClientRow> {
    const started = Date.now();
    try {
      const row = await this.fetchAndCheck(clientId, now);
      await this.repo.saveClient(row);
      return row;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.opts.logger.info({ clientId, reason }, 'client metadata document refused');
      await sleep(started + this.opts.timeoutMs - Date.now());
      throw new OAuthError('invalid_client', 'oauth_server.metadata_unusable', {}, 401);
    }
  }

  private async fetchAndCheck(clientId: string, now: number): Promise<ClientRow> {
    // No redirect is followed (Client ID Metadata Document draft: the document is at its own URL).
    const response = await this.fetch(clientId, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(this.opts.timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new Unusable(`HTTP ${response.status}`);
    }
    if (!JSON_TYPE.test(response.headers.get('content-type') ?? '')) {
      await response.body?.cancel().catch(() => undefined);
      throw new Unusable(`content type ${response.headers.get('content-type') ?? 'missing'}`);
    }
    const text = await readLimited(response, MAX_METADATA_BYTES);
    if (text === undefined) throw new Unusable(`larger than ${MAX_METADATA_BYTES} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Unusable('not JSON');
    }
    if ((body as Record<string, unknown> | null)?.client_id !== clientId) throw new Unusable('client_id does not equal the document URL');
    const meta = parseClientMetadata(body);
    return {
      client_id: clientId,
      kind: 'metadata',
      client_name: meta.name,
      client_uri: meta.clientUri,
      logo_uri: meta.logoUri,
      redirect_uris: JSON.stringify(meta.redirectUris),
      created_at: now,
      expires_at: now + cacheMs(response.headers.get('cache-control')),
    };
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
