import { discoverOAuthServerInfo, extractWWWAuthenticateParams, registerClient } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import { resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { ServiceSpec } from '../../gateway/catalog.js';
import { notFound } from '../../http/errors.js';
import { LocalisedError } from '../../i18n/localised-error.js';
import { baseOf, CALLBACK_PATH, CLIENT_METADATA_PATH, text, type UpstreamOAuthDeps } from './common.js';
import type { OAuthServiceRow } from './repo.js';

/**
 * The discovery and registration client (docs/decisions/0030-upstream-oauth.md): finds a service's
 * authorization server (RFC 9728 protected resource metadata, RFC 8414 or OpenID metadata) and
 * Toolport's client there (a hand-entered one, a Client ID Metadata Document, or RFC 7591 dynamic
 * registration). `changed` tells the rest of the module (and every replica) that the settings moved.
 */
export class ProviderClient {
  private readonly discovering = new Map<number, Promise<unknown>>();

  constructor(
    private readonly deps: UpstreamOAuthDeps,
    private readonly changed: (serviceId: number) => void,
  ) {}

  /** A service without a connection answered 401: what it said is remembered, it now needs authorization. */
  unauthorized(serviceId: number, wwwAuthenticate: string): void {
    if (this.discovering.has(serviceId)) return;
    const work = this.discoverAfter401(serviceId, wwwAuthenticate)
      .catch((err) => this.deps.logger.warn({ err, serviceId }, 'upstream OAuth discovery failed'))
      .finally(() => this.discovering.delete(serviceId));
    this.discovering.set(serviceId, work);
  }

  /** Settles once the discoveries started by 401 answers have finished (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.discovering.values()]);
  }

  /** Toolport's Client ID Metadata Document, served at the URL that is its client id. */
  clientMetadata(origin: string) {
    const base = baseOf(this.deps, origin);
    return {
      client_id: `${base}${CLIENT_METADATA_PATH}`,
      client_name: 'Toolport',
      redirect_uris: [`${base}${CALLBACK_PATH}`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  private async discoverAfter401(serviceId: number, wwwAuthenticate: string): Promise<void> {
    const existing = await this.deps.repo.settings(serviceId);
    if (existing?.issuer) return;
    const service = await this.deps.catalog.byId(serviceId);
    if (!service || service.type === 'stdio' || service.type === 'openapi') return;
    await this.discover(service, wwwAuthenticate);
  }

  /**
   * RFC 9728 protected resource metadata (from the 401's `resource_metadata`, else the well-known
   * paths), then the authorization server's RFC 8414 metadata, else its OpenID configuration.
   */
  async discover(service: ServiceSpec, wwwAuthenticate: string | undefined): Promise<OAuthServiceRow> {
    let www = wwwAuthenticate;
    if (www === undefined) www = await this.challenge(service);
    const hints = www ? extractWWWAuthenticateParams(new Response(null, { status: 401, headers: { 'www-authenticate': www } })) : {};
    let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
    try {
      info = await discoverOAuthServerInfo(service.command, {
        ...(hints.resourceMetadataUrl ? { resourceMetadataUrl: hints.resourceMetadataUrl } : {}),
        fetchFn: this.deps.fetch,
      });
    } catch (err) {
      throw new LocalisedError('upstream_oauth.discovery_failed', { service: service.name, detail: text(err) });
    }
    if (!info.authorizationServerMetadata) {
      throw new LocalisedError('upstream_oauth.discovery_failed', { service: service.name, detail: 'no authorization server metadata' });
    }
    const resource = info.resourceMetadata?.resource ?? resourceUrlFromServerUrl(service.command).href;
    const scope = hints.scope ?? info.resourceMetadata?.scopes_supported?.join(' ') ?? '';
    const patch = {
      issuer: info.authorizationServerMetadata.issuer || info.authorizationServerUrl,
      metadata_json: JSON.stringify(info.authorizationServerMetadata),
      resource,
      scope,
    };
    const before = await this.deps.repo.settings(service.id);
    // Another authorization server: whatever was registered with the old one is of no use.
    const reset = before?.issuer && before.issuer !== patch.issuer && before.registration !== 'manual';
    await this.deps.repo.saveSettings(
      service.id,
      reset ? { ...patch, registration: '', client_id: '', client_secret_enc: null, redirect_uri: '' } : patch,
    );
    this.changed(service.id);
    const row = await this.deps.repo.settings(service.id);
    if (!row) throw notFound();
    return row;
  }

  /** An unauthenticated initialize, to read the service's WWW-Authenticate challenge. */
  private async challenge(service: ServiceSpec): Promise<string> {
    try {
      const response = await this.deps.fetch(service.command, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...service.headers },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'toolport', version: '0' } },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel().catch(() => undefined);
      return response.status === 401 ? (response.headers.get('www-authenticate') ?? '') : '';
    } catch {
      return '';
    }
  }

  /**
   * Toolport's client at this authorization server: the admin's hand-entered client when there is one,
   * else a Client ID Metadata Document (ServerAddress https and the server supports it), else dynamic
   * registration (RFC 7591), registered again when the redirect URI changed.
   */
  async client(service: ServiceSpec, row: OAuthServiceRow, redirectUri: string): Promise<OAuthClientInformationMixed> {
    const secret = row.client_secret_enc ? this.deps.secrets.decrypt(row.client_secret_enc) : undefined;
    if (row.registration === 'manual' && row.client_id) return { client_id: row.client_id, ...(secret ? { client_secret: secret } : {}) };
    if (row.client_id && row.redirect_uri === redirectUri)
      return { client_id: row.client_id, ...(secret ? { client_secret: secret } : {}) };
    const metadata = JSON.parse(row.metadata_json) as AuthorizationServerMetadata & { client_id_metadata_document_supported?: boolean };
    const base = redirectUri.slice(0, -CALLBACK_PATH.length);
    if (base.startsWith('https://') && metadata.client_id_metadata_document_supported) {
      const clientId = `${base}${CLIENT_METADATA_PATH}`;
      await this.deps.repo.saveSettings(service.id, {
        registration: 'cimd',
        client_id: clientId,
        client_secret_enc: null,
        redirect_uri: redirectUri,
      });
      return { client_id: clientId };
    }
    if (!metadata.registration_endpoint) throw new LocalisedError('upstream_oauth.no_registration', { service: service.name });
    let registered: Awaited<ReturnType<typeof registerClient>>;
    try {
      registered = await registerClient(row.issuer, {
        metadata,
        clientMetadata: {
          client_name: 'Toolport',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          ...(row.scope ? { scope: row.scope } : {}),
        },
        fetchFn: this.deps.fetch,
      });
    } catch (err) {
      throw new LocalisedError('upstream_oauth.registration_failed', { service: service.name, detail: text(err) });
    }
    await this.deps.repo.saveSettings(service.id, {
      registration: 'dynamic',
      client_id: registered.client_id,
      client_secret_enc: registered.client_secret ? this.deps.secrets.encrypt(registered.client_secret) : null,
      redirect_uri: redirectUri,
    });
    return { client_id: registered.client_id, ...(registered.client_secret ? { client_secret: registered.client_secret } : {}) };
  }
}
