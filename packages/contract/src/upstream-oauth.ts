import { z } from 'zod';

/**
 * Toolport as the OAuth client of remote MCP services (issue 19): how a service is connected, and
 * the state each caller sees. Tokens never appear in any answer.
 */
export const oauthModes = ['shared', 'per_user'] as const;
export const OAuthMode = z.enum(oauthModes);
export type OAuthMode = z.infer<typeof OAuthMode>;

/** As the caller sees it: in per-user mode, whether the caller's own account is connected. */
export const oauthStatuses = ['none', 'needs_authorization', 'connected'] as const;
export const OAuthStatus = z.enum(oauthStatuses);
export type OAuthStatus = z.infer<typeof OAuthStatus>;

/** How Toolport became a client of the service's authorization server. */
export const OAuthRegistration = z.enum(['', 'cimd', 'dynamic', 'manual']);

export const UpstreamOAuthState = z.object({
  service_id: z.number().int(),
  /** null while the service uses no OAuth connection. */
  oauth_mode: OAuthMode.nullable(),
  oauth_status: OAuthStatus,
  /** The authorization server, once discovered. */
  issuer: z.string(),
  registration: OAuthRegistration,
  /** Admins only; empty for others. */
  client_id: z.string(),
  /** Whether a client secret is stored (never the secret). */
  has_client_secret: z.boolean(),
  /** The connection the caller's calls use: who it acts as upstream when the provider said. */
  connected_as: z.string(),
  /** Unix milliseconds the access token expires at; null when unknown or not connected. */
  expires_at: z.number().int().nullable(),
  /** Unix milliseconds of the connection, null when not connected. */
  connected_at: z.number().int().nullable(),
});
export type UpstreamOAuthState = z.infer<typeof UpstreamOAuthState>;

/** `PUT /mcp_services/{id}/oauth` (admins): the mode, and client credentials the admin registered by hand. */
export const UpdateUpstreamOAuthRequest = z.object({
  oauth_mode: OAuthMode.optional(),
  /** An empty string removes the hand-entered client (registration is then automatic again). */
  client_id: z.string().max(2048).optional(),
  client_secret: z.string().max(4096).optional(),
});
export type UpdateUpstreamOAuthRequest = z.infer<typeof UpdateUpstreamOAuthRequest>;

export const ConnectResult = z.object({
  /** The provider's authorize URL, with Toolport's callback as redirect: open it in the browser. */
  authorize_url: z.string(),
});
export type ConnectResult = z.infer<typeof ConnectResult>;

/** What the provider sends the browser back with. */
export const UpstreamOAuthCallbackQuery = z.object({
  state: z.string().max(512).optional(),
  code: z.string().max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
  iss: z.string().max(2048).optional(),
});

/** The console page the callback ends on reads these from its query string. */
export const UPSTREAM_OAUTH_RESULT_PAGE = '/oauth/upstream';
export const upstreamOAuthResults = ['connected', 'denied', 'invalid_state', 'failed'] as const;
export type UpstreamOAuthResult = (typeof upstreamOAuthResults)[number];

/** The Client ID Metadata Document Toolport serves about itself. */
export const ClientMetadataDocument = z.object({
  client_id: z.string(),
  client_name: z.string(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  token_endpoint_auth_method: z.string(),
});
