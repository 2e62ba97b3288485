import { z } from 'zod';
import { OidcPublicProvider } from './oidc.js';

/** Every preference key the server accepts; any other key is refused. */
export const optionKeys = [
  'ServerAddress',
  'GitHubClientId',
  'GitHubClientSecret',
  'GoogleClientId',
  'GoogleClientSecret',
  'GitHubOAuthEnabled',
  'GoogleOAuthEnabled',
  'StdioServiceStartupStrategy',
  'StdioIdleTimeoutMinutes',
  'HealthCheckIntervalSeconds',
  'UpstreamCallTimeoutSeconds',
  'RequestRecordRetentionDays',
  'ServiceLogRetentionDays',
  'InstallLogRetentionDays',
  'TimeZone',
  'RegistrationEnabled',
  'AllowPrivateNetworkUpstreams',
  'AllowedOrigins',
  'OAuthClientRegistrationEnabled',
  'EmbeddingsURL',
  'EmbeddingsModel',
  'EmbeddingsAPIKey',
  'EmbeddingsDimensions',
  'EmbeddingsTimeoutMs',
  'OIDCProviders',
  'AuditLogForwarding',
] as const;
export const OptionKey = z.enum(optionKeys);
export type OptionKey = z.infer<typeof OptionKey>;

/** Keys whose values are secrets: encrypted at rest, masked when read, never logged. */
export const secretOptionKeys: readonly OptionKey[] = ['GitHubClientSecret', 'GoogleClientSecret', 'EmbeddingsAPIKey'];

export const OptionEntry = z.object({ key: OptionKey, value: z.string() });
export type OptionEntry = z.infer<typeof OptionEntry>;

export const UpdateOptionRequest = z.object({ key: z.string().min(1).max(64), value: z.union([z.string(), z.boolean(), z.number()]) });
export type UpdateOptionRequest = z.infer<typeof UpdateOptionRequest>;

export const StatusData = z.object({
  system_name: z.string(),
  version: z.string(),
  start_time: z.number().int(),
  server_address: z.string(),
  github_oauth: z.boolean(),
  github_client_id: z.string(),
  google_oauth: z.boolean(),
  google_client_id: z.string(),
  registration_enabled: z.boolean(),
  /** The OpenID Connect providers one may sign in with (decision 0048), in the order configured. */
  oidc_providers: z.array(OidcPublicProvider),
});
export type StatusData = z.infer<typeof StatusData>;

/** `GET /health` and `GET /ready`: `reason` says why a replica is not ready. */
export const ProbeResult = z.object({ status: z.string(), reason: z.string().optional() });
export type ProbeResult = z.infer<typeof ProbeResult>;

/**
 * The embeddings provider of discovery search (decision 0046) as this replica last saw it: `off` (no URL or
 * model set), `unknown` (set, not used yet), `ok`, or `failing` with `reason` (timeout, http, network,
 * invalid_answer) and the provider's own words in `detail`.
 */
export const EmbeddingsStatus = z.object({
  state: z.enum(['off', 'unknown', 'ok', 'failing']),
  reason: z.enum(['timeout', 'http', 'network', 'invalid_answer']).nullable(),
  detail: z.string(),
  checked_at: z.number().int().nullable(),
  model: z.string(),
  dimensions: z.number().int().nullable(),
  /** Tool vectors stored for this provider and model. */
  vectors: z.number().int(),
});
export type EmbeddingsStatus = z.infer<typeof EmbeddingsStatus>;
