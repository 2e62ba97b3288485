import { MASKED_SECRET, secretOptionKeys } from '@toolport/contract';
import { isCredentialParam, maskUrlCredentials, maskValues } from '../../infra/credentials.js';

/**
 * The change an audit entry records, with its secrets masked by the rules of a masked export
 * (infra/credentials.ts): every value of a map of variables or headers, the credentials of a URL, and
 * any field, query parameter or command-line flag whose name says it is a credential
 * (`isCredentialParam`: password, token, client_secret, api_key…). Secret preferences
 * (`secretOptionKeys`) have their value masked. Bounded, so a hostile body cannot bloat the table:
 * nesting, list lengths and string lengths are cut.
 */

/** Fields that hold a map of variables or headers: every value is a secret, every name stays. */
const VALUE_MAPS = new Set(['env', 'envs', 'environments', 'headers', 'headers_json', 'default_envs_json', 'user_provided_env_vars']);
/** Fields that hold a command line, whose `--token x`, `--api-key=x` and `API_KEY=x` parts are masked. */
const COMMAND_LINES = new Set(['command', 'args', 'custom_args', 'typed_command']);

/**
 * `key` names a pair's key in request bodies (a preference's `{key, value}`), not a credential as it does in a
 * URL's query: it is shown. Everything else whose name `isCredentialParam` flags is masked.
 */
const NAMES_NOT_SECRETS = new Set(['key']);

const MAX_DEPTH = 8;
const MAX_ITEMS = 200;
const MAX_STRING = 2000;
/** A whole entry's changes, as JSON. */
export const MAX_CHANGES_BYTES = 32 * 1024;

const cut = (s: string): string => (s.length > MAX_STRING ? `${s.slice(0, MAX_STRING)}…` : s);

const BEARER = /\b(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;

/** A string anywhere: URL credentials and bearer tokens masked. */
function maskText(s: string): string {
  let out = /^[a-z][a-z0-9+.-]*:\/\//i.test(s.trim()) ? maskUrlCredentials(s.trim()) : s;
  out = out.replace(BEARER, `$1${MASKED_SECRET}`);
  return cut(out);
}

/** One command line, as a string or its words: credential flags' values and `NAME=value` credentials masked. */
function maskCommand(value: unknown): unknown {
  const words = (list: unknown[]): unknown[] => {
    let hideNext = false;
    return list.map((w) => {
      if (typeof w !== 'string') return maskAny(w, 1);
      if (hideNext) {
        hideNext = false;
        return MASKED_SECRET;
      }
      const flag = /^(--?)([A-Za-z][\w-]*)$/.exec(w);
      if (flag && isCredentialParam(flag[2] as string)) {
        hideNext = true;
        return w;
      }
      const pair = /^(--?)?([A-Za-z_][\w-]*)=(.*)$/s.exec(w);
      if (pair && (pair[3] as string) !== '' && isCredentialParam(pair[2] as string)) return `${pair[1] ?? ''}${pair[2]}=${MASKED_SECRET}`;
      return maskText(w);
    });
  };
  if (Array.isArray(value)) return words(value.slice(0, MAX_ITEMS));
  if (typeof value === 'string') return cut(words(value.split(/(\s+)/)).join(''));
  return maskAny(value, 1);
}

/** A map of variables or headers: names kept, values masked; a JSON string of one too. */
function maskValueMap(value: unknown): unknown {
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return maskValueMap(parsed);
    } catch {
      // Not JSON: the whole text may be secret.
    }
    return value === '' ? '' : MASKED_SECRET;
  }
  if (Array.isArray(value)) {
    // [{name|key, value}] lists.
    return value
      .slice(0, MAX_ITEMS)
      .map((item) =>
        item && typeof item === 'object' && 'value' in item ? { ...(maskAny(item, 1) as object), value: MASKED_SECRET } : MASKED_SECRET,
      );
  }
  if (value && typeof value === 'object') {
    const names = Object.keys(value).slice(0, MAX_ITEMS);
    return maskValues(Object.fromEntries(names.map((k) => [cut(k), ''])));
  }
  return value === undefined || value === null || value === '' ? value : MASKED_SECRET;
}

function maskAny(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '…';
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((v) => maskAny(v, depth + 1));
  const source = value as Record<string, unknown>;
  // A preference: `{key, value}` of a secret one.
  const secretOption = typeof source.key === 'string' && (secretOptionKeys as readonly string[]).includes(source.key);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source).slice(0, MAX_ITEMS)) {
    const v = source[key];
    if (VALUE_MAPS.has(key)) out[cut(key)] = maskValueMap(v);
    else if (COMMAND_LINES.has(key)) out[cut(key)] = maskCommand(v);
    else if ((isCredentialParam(key) && !NAMES_NOT_SECRETS.has(key)) || (secretOption && key === 'value'))
      out[cut(key)] = v === '' || v == null ? v : MASKED_SECRET;
    else if (key === 'value' && typeof source.key === 'string' && typeof v === 'string' && /^\s*[[{]/.test(v))
      // A preference that is a JSON document (OIDCProviders): read, so the secrets inside are masked by name.
      out[cut(key)] = maskAny(bodyFields(v), depth + 1);
    else out[cut(key)] = maskAny(v, depth + 1);
  }
  return out;
}

/**
 * A request's fields (or a command's arguments) as an audit entry stores them: an object, secrets masked,
 * at most MAX_CHANGES_BYTES as JSON (beyond that, only the names of the fields).
 */
export function maskChanges(fields: Record<string, unknown>): Record<string, unknown> {
  const masked = maskAny(fields, 0) as Record<string, unknown>;
  if (JSON.stringify(masked).length <= MAX_CHANGES_BYTES) return masked;
  return { truncated: true, fields: Object.keys(masked).slice(0, MAX_ITEMS) };
}

/** A body as sent: a JSON text (an import document) is read as what it says, so its secrets are found too. */
export function bodyFields(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    // Text that is not JSON is not shown: it may be anything, secrets included.
    return { text_length: body.length };
  }
}
