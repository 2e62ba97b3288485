import { isMessageKey, type Locale, type MessageKey, type MessageParams, translate } from './index.js';

/** Says a message in one language: `req.t`, or `translate` bound to a locale. */
export type Translator = (key: MessageKey, params?: MessageParams) => string;

/**
 * A message of ours as data: its key and parameters, and an untranslated detail (a command's own output, a
 * tool server's diagnostic) or a further message of ours, said after a colon. It is what a row or a task keeps
 * so that each reader gets it in their language.
 */
export interface MessageData {
  key: MessageKey;
  params: MessageParams;
  detail?: string | MessageData;
}

/** The message in the translator's language, its detail after the language's colon. */
export function sayMessage(data: MessageData, t: Translator): string {
  const message = t(data.key, data.params);
  const detail = typeof data.detail === 'string' ? data.detail : data.detail ? sayMessage(data.detail, t) : '';
  return detail ? `${message}${t('message.detail_colon')}${detail}` : message;
}

/**
 * An error a client may see, raised where no request (and so no language) is at hand — deep in the
 * upstream pool or an outbound fetch. It carries its message key; whoever answers the client renders
 * it in the client's language with `localised`, and logs read the English `message`.
 */
export class LocalisedError extends Error {
  constructor(
    readonly key: MessageKey,
    readonly params: MessageParams = {},
    /** Untranslated detail (a command's own output, an address), or the cause in words of ours, appended after a colon. */
    readonly detail: string | LocalisedError = '',
  ) {
    super(sayMessage(messageDataOf({ key, params, detail }), english));
    this.name = new.target.name;
  }

  localised(locale: Locale): string {
    return sayMessage(this.data(), (key, params) => translate(locale, key, params));
  }

  /** The message as data, for storing or for saying later in the reader's language. */
  data(): MessageData {
    return messageDataOf(this);
  }

  /** A message kept as data (redacted, say), as an error again. */
  static from(data: MessageData): LocalisedError {
    const detail = typeof data.detail === 'string' ? data.detail : data.detail ? LocalisedError.from(data.detail) : '';
    return new LocalisedError(data.key, data.params, detail);
  }
}

const english: Translator = (key, params) => translate('en', key, params);

function messageDataOf(m: { key: MessageKey; params: MessageParams; detail: string | LocalisedError }): MessageData {
  const detail = typeof m.detail === 'string' ? m.detail : m.detail.data();
  return { key: m.key, params: { ...m.params }, ...(detail ? { detail } : {}) };
}

/** The same message with every parameter and detail passed through `redact` (secret values taken out). */
export function redactMessage(data: MessageData, redact: (text: string) => string): MessageData {
  const params = Object.fromEntries(Object.entries(data.params).map(([k, v]) => [k, typeof v === 'string' ? redact(v) : v]));
  const detail = typeof data.detail === 'string' ? redact(data.detail) : data.detail && redactMessage(data.detail, redact);
  return { key: data.key, params, ...(detail ? { detail } : {}) };
}

/** Longest detail and parameter kept in a stored message: the columns hold 4000 characters. */
const MAX_STORED_DETAIL = 2000;
const MAX_STORED_PARAM = 300;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

function clipped(data: MessageData): MessageData {
  const params = Object.fromEntries(
    Object.entries(data.params).map(([k, v]) => [k, typeof v === 'string' ? clip(v, MAX_STORED_PARAM) : v]),
  );
  const detail = typeof data.detail === 'string' ? clip(data.detail, MAX_STORED_DETAIL) : data.detail && clipped(data.detail);
  return { key: data.key, params, ...(detail ? { detail } : {}) };
}

/**
 * A message of ours as a text column keeps it (a service's `health_details`): a small JSON object with the
 * key, parameters and detail, and its English words under `en` for whoever reads the column directly (SQL,
 * a backup) and for a key a later version no longer has. `readStoredText` says it in the reader's language.
 */
export function storedText(data: MessageData): string {
  const kept = clipped(data);
  return JSON.stringify({ ...kept, en: sayMessage(kept, english) });
}

/**
 * A stored text in the reader's language: a message of ours (`storedText`) is said anew; anything else —
 * older rows in English, a tool server's or the gateway's own diagnostic — is shown as it is.
 */
export function readStoredText(text: string, t: Translator): string {
  if (!text.startsWith('{"key":')) {
    const ours = gatewayReason(text);
    return ours ? sayMessage(ours, t) : text;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const data = messageDataFrom(parsed);
  if (data) return sayMessage(data, t);
  // A key this version does not know: the English words stored with it.
  const en = (parsed as { en?: unknown }).en;
  return typeof en === 'string' ? en : text;
}

/** A message read back from storage, checked: a known key, flat parameters, a detail of text or a message. */
export function messageDataFrom(value: unknown, depth = 0): MessageData | undefined {
  if (!value || typeof value !== 'object' || depth > 4) return undefined;
  const v = value as { key?: unknown; params?: unknown; detail?: unknown };
  if (typeof v.key !== 'string' || !isMessageKey(v.key)) return undefined;
  const params: MessageParams = {};
  if (v.params !== undefined) {
    if (!v.params || typeof v.params !== 'object' || Array.isArray(v.params)) return undefined;
    for (const [k, p] of Object.entries(v.params)) {
      if (typeof p !== 'string' && typeof p !== 'number') return undefined;
      params[k] = p;
    }
  }
  if (v.detail === undefined || v.detail === '') return { key: v.key, params };
  if (typeof v.detail === 'string') return { key: v.key, params, detail: v.detail };
  const detail = messageDataFrom(v.detail, depth + 1);
  return detail ? { key: v.key, params, detail } : undefined;
}

/**
 * The gateway's own words in a health reason (decision 0054). The gateway composes its reasons in English (its
 * logs read them); these phrases are ours and are said in the reader's language, while what follows them from
 * the tool server (its stderr) or the system (a connect error such as `connect ECONNREFUSED 127.0.0.1:9`) stays
 * as it was written. A text none of them starts is not ours and is shown as it is.
 */
const GATEWAY_PHRASES: { pattern: RegExp; key: MessageKey; params?: string[]; nested?: boolean }[] = [
  { pattern: /^could not start: ([\s\S]+)$/, key: 'health.could_not_start', nested: true },
  { pattern: /^upstream request failed: ([\s\S]+)$/, key: 'health.request_failed', nested: true },
  { pattern: /^upstream unavailable: ([\s\S]+)$/, key: 'health.unavailable', nested: true },
  { pattern: /^fetch failed(?: \(([\s\S]+)\))?$/, key: 'health.unreachable' },
  { pattern: /^tool server exited with code (-?\d+|null)(?:: ([\s\S]*))?$/, key: 'health.exited', params: ['code'] },
  { pattern: /^tool server killed by (\w+)(?:: ([\s\S]*))?$/, key: 'health.killed', params: ['signal'] },
  { pattern: /^service is disabled$/, key: 'health.disabled' },
  { pattern: /^(\d+) tools, (\d+) ms$/, key: 'health.round_trip', params: ['tools', 'ms'] },
  { pattern: /^(\d+) ms$/, key: 'health.round_trip_ms', params: ['ms'] },
  { pattern: /^reachable; it answers 401 until each user connects their own account$/, key: 'health.per_user_reachable' },
  { pattern: /^the tool server stopped \(idle\) during the check$/, key: 'health.stopped_idle' },
];

/** A reason in the gateway's own words as a message (its quoted part as the detail), or undefined. */
export function gatewayReason(text: string, depth = 0): MessageData | undefined {
  if (depth > 4) return undefined;
  for (const { pattern, key, params = [], nested } of GATEWAY_PHRASES) {
    const m = pattern.exec(text);
    if (!m) continue;
    const values = Object.fromEntries(params.map((name, i) => [name, m[i + 1] ?? '']));
    const rest = m[params.length + 1] ?? '';
    if (!rest) return { key, params: values };
    const inner = nested ? gatewayReason(rest, depth + 1) : undefined;
    return { key, params: values, detail: inner ?? rest };
  }
  return undefined;
}
