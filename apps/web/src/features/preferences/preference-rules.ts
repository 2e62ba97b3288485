import {
  MAX_OAUTH_CLIENT_ID_LENGTH,
  MAX_OAUTH_CLIENT_SECRET_LENGTH,
  type OAuthProvider,
  type OptionEntry,
  type OptionKey,
  StartupStrategy,
} from '@toolport/contract';
import type { ParseKeys } from 'i18next';

/** The preferences this screen shows, as the server lists them (secrets already masked by the server). */
export type Preferences = Partial<Record<OptionKey, string>>;

export const preferencesOf = (entries: OptionEntry[]): Preferences => Object.fromEntries(entries.map((e) => [e.key, e.value]));

export const startupStrategies = StartupStrategy.options;

export const isStartupStrategy = (value: string | undefined): value is StartupStrategy => StartupStrategy.safeParse(value).success;

/** The option keys of one sign-in provider. */
export const providerKeys = {
  github: { label: 'GitHub', enabled: 'GitHubOAuthEnabled', clientId: 'GitHubClientId', clientSecret: 'GitHubClientSecret' },
  google: { label: 'Google', enabled: 'GoogleOAuthEnabled', clientId: 'GoogleClientId', clientSecret: 'GoogleClientSecret' },
} as const satisfies Record<OAuthProvider, { label: string; enabled: OptionKey; clientId: OptionKey; clientSecret: OptionKey }>;

/** How the server shows a stored secret (it never sends the value back). */
export const SECRET_MASK = '********';

/** Server limits of the credential fields. */
export const CLIENT_ID_MAX = MAX_OAUTH_CLIENT_ID_LENGTH;
export const CLIENT_SECRET_MAX = MAX_OAUTH_CLIENT_SECRET_LENGTH;

/** The server address as it is saved (docs/console.md §9): trimmed, without trailing slashes. */
export const normaliseServerAddress = (raw: string): string => raw.trim().replace(/\/+$/, '');

/**
 * Why a server address cannot be saved, as a key of the preferences namespace; undefined when it can.
 * Empty is allowed: the server then uses the address the browser reached it by.
 */
export function serverAddressProblem(address: string): ParseKeys<'preferences'> | undefined {
  if (address === '') return undefined;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'serverAddress.errors.invalid';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'serverAddress.errors.scheme';
  if (url.search || url.hash || address.includes('?') || address.includes('#')) return 'serverAddress.errors.query';
  return undefined;
}

/**
 * The AllowedOrigins value to save (one origin per line, as the server stores it), or the first entry that
 * is not exactly `scheme://host[:port]`. Entries may be separated by commas, spaces or new lines.
 */
export function planAllowedOrigins(raw: string): { ok: true; value: string } | { ok: false; entry: string } {
  const out: string[] = [];
  for (const entry of raw.split(/[\s,]+/).filter((e) => e !== '')) {
    let origin: string | undefined;
    try {
      const url = new URL(entry);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === entry.replace(/\/$/, '').toLowerCase())
        origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (!origin) return { ok: false, entry };
    if (!out.includes(origin)) out.push(origin);
  }
  return { ok: true, value: out.join('\n') };
}

/** Where a provider sends the browser back (docs/console.md §2.13): the console's own return route. */
export const callbackUrl = (server: string, provider: OAuthProvider): string => `${server}/oauth/${provider}`;

/** How far a provider is set up, the way the sign-in page will see it (the server needs id and secret). */
export type ProviderReadiness = 'off' | 'active' | 'incomplete';

export function providerReadiness(prefs: Preferences, provider: OAuthProvider): ProviderReadiness {
  const keys = providerKeys[provider];
  if (prefs[keys.enabled] !== 'true') return 'off';
  return prefs[keys.clientId] && prefs[keys.clientSecret] ? 'active' : 'incomplete';
}

/** What the credentials form sends: only what changed, and never the mask of the stored secret. */
export interface CredentialsDraft {
  clientId: string;
  clientSecret: string;
}

export type CredentialsPlan = { ok: true; updates: { key: OptionKey; value: string }[] } | { ok: false; problem: ParseKeys<'preferences'> };

/**
 * The updates that save a credentials form, or why it cannot be saved (a key of the preferences namespace).
 * The secret field starts empty: left blank (or holding the mask the server shows) it keeps the stored secret.
 */
export function planCredentials(prefs: Preferences, provider: OAuthProvider, draft: CredentialsDraft): CredentialsPlan {
  const keys = providerKeys[provider];
  const clientId = draft.clientId.trim();
  const secret = draft.clientSecret.trim();
  const savedSecret = prefs[keys.clientSecret] ?? '';
  const updates: { key: OptionKey; value: string }[] = [];
  if (clientId !== (prefs[keys.clientId] ?? '')) {
    if (clientId === '' && prefs[keys.enabled] === 'true') return { ok: false, problem: 'credentials.errors.idNeededWhileEnabled' };
    updates.push({ key: keys.clientId, value: clientId });
  }
  if (secret !== '' && secret !== savedSecret) updates.push({ key: keys.clientSecret, value: secret });
  return updates.length > 0 ? { ok: true, updates } : { ok: false, problem: 'credentials.errors.nothingChanged' };
}
