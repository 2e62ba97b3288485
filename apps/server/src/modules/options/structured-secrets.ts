import { OidcProviderList, type OidcProviderSettings } from '@toolport/contract';
import type { Secrets } from '../../infra/secrets.js';
import { SECRET_MASK } from './definitions.js';

/**
 * A preference that is a JSON document with secrets inside (the OpenID Connect providers): the secrets
 * are encrypted one by one at rest, masked when read, and a mask sent back keeps the stored secret.
 */
export interface StructuredSecrets {
  /** The stored form of a normalised value. */
  seal(value: string, secrets: Secrets): string;
  /** The value in memory from its stored form. */
  open(stored: string, secrets: Secrets): string;
  /** The value as the console reads it. */
  mask(value: string): string;
  /** The submitted value with every masked secret replaced by the one in `previous`. */
  keep(submitted: string, previous: string): string;
}

const parse = (value: string): OidcProviderSettings[] => (value ? OidcProviderList.parse(JSON.parse(value)) : []);

const mapSecrets = (value: string, f: (secret: string, slug: string) => string): string =>
  value ? JSON.stringify(parse(value).map((p) => ({ ...p, client_secret: p.client_secret ? f(p.client_secret, p.slug) : '' }))) : '';

/** `OIDCProviders`: each provider's `client_secret`. */
export const oidcProviderSecrets: StructuredSecrets = {
  seal: (value, secrets) => mapSecrets(value, (secret) => secrets.encrypt(secret)),
  open: (stored, secrets) => mapSecrets(stored, (sealed) => secrets.decrypt(sealed)),
  mask: (value) => mapSecrets(value, () => SECRET_MASK),
  keep(submitted, previous) {
    if (!submitted) return submitted;
    const before = new Map(parse(previous).map((p) => [p.slug, p.client_secret]));
    return mapSecrets(submitted, (secret, slug) => (secret === SECRET_MASK ? (before.get(slug) ?? '') : secret));
  },
};
