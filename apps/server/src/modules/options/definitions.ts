import {
  MAX_OAUTH_CLIENT_ID_LENGTH,
  MAX_OAUTH_CLIENT_SECRET_LENGTH,
  OidcProviderList,
  type OptionKey,
  optionKeys,
  secretOptionKeys,
} from '@toolport/contract';
import type { MessageKey, MessageParams } from '../../i18n/index.js';

/** A preference's default and how a submitted value is checked and normalised. */
interface Definition {
  default: string;
  /** Returns the value to store, or the message (naming the key) that refuses it. */
  normalise(raw: string): { value: string } | Refusal;
}

/** Each refusal is a whole message in every language; `{key}` is filled in by the service. */
interface Refusal {
  reason: MessageKey;
  params?: MessageParams;
}

const bool: Definition['normalise'] = (raw) => {
  const v = raw.trim().toLowerCase();
  return v === 'true' || v === 'false' ? { value: v } : { reason: 'option.invalid_boolean' };
};

const text =
  (max: number): Definition['normalise'] =>
  (raw) => {
    const v = raw.trim();
    return v.length <= max ? { value: v } : { reason: 'option.too_long', params: { max } };
  };

const integer =
  (min: number, max: number): Definition['normalise'] =>
  (raw) => {
    const v = raw.trim();
    const refusal: Refusal = { reason: 'option.invalid_integer', params: { min, max } };
    if (!/^\d+$/.test(v)) return refusal;
    const n = Number(v);
    return n >= min && n <= max ? { value: String(n) } : refusal;
  };

/** Days of history kept by the retention purge (modules/history/retention.ts); 0 keeps everything. */
const retentionDays: Definition['normalise'] = (raw) => {
  const result = integer(0, 3650)(raw);
  return 'reason' in result ? { reason: 'option.invalid_retention_days', params: { min: 0, max: 3650 } } : result;
};

const serverAddress: Definition['normalise'] = (raw) => {
  const v = raw.trim().replace(/\/+$/, '');
  if (v === '') return { value: '' };
  try {
    const url = new URL(v);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { reason: 'option.url_scheme' };
    if (url.search || url.hash) return { reason: 'option.url_query' };
    return { value: v };
  } catch {
    return { reason: 'option.invalid_url' };
  }
};

/**
 * Browser origins allowed to call the MCP endpoints (gateway/downstream/origin-policy.ts): stored
 * normalised, one per line; an entry that is not exactly an origin is refused by name.
 */
const originList: Definition['normalise'] = (raw): { value: string } | Refusal => {
  const entries = raw.split(/[\s,]+/).filter((e) => e !== '');
  const out: string[] = [];
  for (const entry of entries) {
    let origin: string | undefined;
    try {
      const url = new URL(entry);
      const bare = entry.replace(/\/$/, '').toLowerCase();
      if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === bare) origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (!origin) return { reason: 'option.invalid_origins', params: { entry: entry.slice(0, 200) } };
    if (!out.includes(origin)) out.push(origin);
  }
  const value = out.join('\n');
  return value.length <= 4000 ? { value } : { reason: 'option.too_long', params: { max: 4000 } };
};

const timeZone: Definition['normalise'] = (raw) => {
  const v = raw.trim();
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: v });
    return { value: v };
  } catch {
    return { reason: 'option.invalid_time_zone' };
  }
};

/** OpenID Connect providers (modules/sign-in-providers, decision 0048): a JSON array checked against the contract's schema. */
const oidcProviders: Definition['normalise'] = (raw) => {
  const v = raw.trim();
  if (v === '' || v === '[]') return { value: '' };
  let json: unknown;
  try {
    json = JSON.parse(v);
  } catch {
    return { reason: 'option.invalid_oidc_providers', params: { detail: 'not JSON' } };
  }
  const parsed = OidcProviderList.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    return { reason: 'option.invalid_oidc_providers', params: { detail: `${where}${issue?.message ?? 'invalid'}`.slice(0, 300) } };
  }
  return { value: parsed.data.length ? JSON.stringify(parsed.data) : '' };
};

export const definitions: Record<OptionKey, Definition> = {
  ServerAddress: { default: '', normalise: serverAddress },
  GitHubClientId: { default: '', normalise: text(MAX_OAUTH_CLIENT_ID_LENGTH) },
  GitHubClientSecret: { default: '', normalise: text(MAX_OAUTH_CLIENT_SECRET_LENGTH) },
  GoogleClientId: { default: '', normalise: text(MAX_OAUTH_CLIENT_ID_LENGTH) },
  GoogleClientSecret: { default: '', normalise: text(MAX_OAUTH_CLIENT_SECRET_LENGTH) },
  GitHubOAuthEnabled: { default: 'false', normalise: bool },
  GoogleOAuthEnabled: { default: 'false', normalise: bool },
  StdioServiceStartupStrategy: {
    default: 'boot',
    normalise: (raw) =>
      raw.trim() === 'boot' || raw.trim() === 'demand' ? { value: raw.trim() } : { reason: 'option.invalid_startup_strategy' },
  },
  StdioIdleTimeoutMinutes: { default: '10', normalise: integer(1, 1440) },
  HealthCheckIntervalSeconds: { default: '300', normalise: integer(0, 86400) },
  UpstreamCallTimeoutSeconds: { default: '300', normalise: integer(1, 3600) },
  RequestRecordRetentionDays: { default: '90', normalise: retentionDays },
  ServiceLogRetentionDays: { default: '30', normalise: retentionDays },
  InstallLogRetentionDays: { default: '30', normalise: retentionDays },
  TimeZone: { default: 'UTC', normalise: timeZone },
  RegistrationEnabled: { default: 'true', normalise: bool },
  // Remote services (and their redirects) on loopback, private and link-local addresses: infra/outbound.ts.
  AllowPrivateNetworkUpstreams: { default: 'true', normalise: bool },
  // Browser-based MCP clients on other sites (gateway/downstream/origin-policy.ts); empty: none.
  AllowedOrigins: { default: '', normalise: originList },
  // Dynamic client registration (RFC 7591) at /oauth2/register, for MCP clients signing in (modules/authorization-server).
  OAuthClientRegistrationEnabled: { default: 'true', normalise: bool },
  // The embeddings provider of discovery search (modules/embeddings, decision 0046): an OpenAI-compatible
  // base URL (…/v1, where POST /embeddings is), the model, its key, the vector size (0: the model's own) and
  // how long a search waits for the query's vector before it ranks lexically.
  EmbeddingsURL: { default: '', normalise: serverAddress },
  EmbeddingsModel: { default: '', normalise: text(200) },
  EmbeddingsAPIKey: { default: '', normalise: text(1000) },
  EmbeddingsDimensions: { default: '0', normalise: integer(0, 16384) },
  EmbeddingsTimeoutMs: { default: '1500', normalise: integer(100, 30000) },
  OIDCProviders: { default: '', normalise: oidcProviders },
  // Each audit entry also written to the server log, for a SIEM that reads it (modules/audit, decision 0049).
  AuditLogForwarding: { default: 'false', normalise: bool },
};

export const isOptionKey = (key: string): key is OptionKey => (optionKeys as readonly string[]).includes(key);
export const isSecretOption = (key: OptionKey): boolean => secretOptionKeys.includes(key);

/** What a secret looks like when read back: enough to tell it is set, nothing of the value. */
export const SECRET_MASK = '********';
export const maskSecret = (value: string): string => (value ? SECRET_MASK : '');
