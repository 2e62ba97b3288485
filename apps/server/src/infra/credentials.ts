import { MASKED_SECRET } from '@toolport/contract';

/**
 * What masked exports (modules/market/export) and the audit trail (modules/audit) hide of a secret: the
 * value, replaced by `********`, with the name kept so the reader sees what was there.
 */

/** Every value replaced by the mask, keys kept: the reader sees what must be filled in. */
export const maskValues = (values: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.keys(values).map((key) => [key, MASKED_SECRET]));

/**
 * Whether a URL query parameter carries a credential, by its name with case, `-` and `_` ignored: `auth`,
 * `pwd`, or a name ending in `key`, `token`, `secret`, `password`, `passwd`, `sig` or `signature`, which covers
 * `key`, `api_key`, `apikey`, `x-api-key`, `token`, `access_token`, `accessToken`, `client_secret` and `sig`
 * (docs/api.md, "Export and import"). A masked export writes their values as `********`.
 */
export function isCredentialParam(name: string): boolean {
  const n = name.toLowerCase().replace(/[-_]/g, '');
  return n === 'auth' || n === 'pwd' || /(key|token|secret|password|passwd|sig|signature)$/.test(n);
}

const decodedName = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
};

/** The `name=value` pairs of a URL's query as written, each with its decoded name. */
const queryParts = (url: URL): { raw: string; name: string; value: string | undefined }[] =>
  url.search
    .slice(1)
    .split('&')
    .filter((raw) => raw !== '')
    .map((raw) => {
      const eq = raw.indexOf('=');
      return { raw, name: decodedName(eq < 0 ? raw : raw.slice(0, eq)), value: eq < 0 ? undefined : raw.slice(eq + 1) };
    });

/**
 * A remote service's URL with its credentials masked like variable values: the user info, and the value of
 * every credential parameter (isCredentialParam). Anything else stays as written; a URL with nothing to mask
 * (or that does not parse) comes back unchanged.
 */
export function maskUrlCredentials(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  let changed = false;
  if (u.username || u.password) {
    if (u.username) u.username = MASKED_SECRET;
    if (u.password) u.password = MASKED_SECRET;
    changed = true;
  }
  const parts = queryParts(u).map((p) => {
    if (p.value === undefined || p.value === '' || !isCredentialParam(p.name)) return p.raw;
    changed = true;
    return `${p.raw.slice(0, p.raw.indexOf('='))}=${MASKED_SECRET}`;
  });
  if (!changed) return url;
  u.search = parts.length ? `?${parts.join('&')}` : '';
  return u.toString();
}

/**
 * An imported URL without what an export masked: masked user info and masked query parameters are left out,
 * never stored. Returns the URL and the names of what was left out (`user:password@`, `?key`), for the report.
 */
export function unmaskedUrl(url: string): [string, string[]] {
  if (!url.includes(MASKED_SECRET) && !url.includes('%2A%2A%2A%2A')) return [url, []];
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [url, []];
  }
  const left: string[] = [];
  const mask = (value: string) => decodedName(value) === MASKED_SECRET;
  if (mask(u.username) || mask(u.password)) {
    u.username = '';
    u.password = '';
    left.push('user:password@');
  }
  const kept = queryParts(u).filter((p) => {
    if (p.value === undefined || !mask(p.value)) return true;
    left.push(`?${p.name}`);
    return false;
  });
  if (left.length === 0) return [url, []];
  u.search = kept.length ? `?${kept.map((p) => p.raw).join('&')}` : '';
  return [u.toString(), left];
}
