import { configuredFetch } from '../../../infra/outbound.js';
import { VERSION } from '../../../version.js';

/** Registries and GitHub ask API clients to name themselves. */
const USER_AGENT = `toolport/${VERSION} (+https://github.com/toolport)`;

/** A registry that could not answer: unreachable, too slow, a 5xx or a body that is not JSON. */
export class SourceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly headers?: Headers,
  ) {
    super(message);
    this.name = 'SourceError';
  }
}

export interface GetJsonOptions {
  timeoutMs: number;
  headers?: Record<string, string>;
}

/**
 * GETs a JSON document with a deadline covering the whole exchange, body included.
 * Answers null when the registry says the thing does not exist (404, 410); throws SourceError
 * for every other failure, so callers can tell "no such package" from "registry down".
 */
export async function getJson(url: string, opts: GetJsonOptions): Promise<unknown> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let res: Response;
  try {
    // Redirects within the registry's origin only (infra/outbound.ts); the base URL is the operator's.
    res = await configuredFetch(url, { headers: { accept: 'application/json', 'user-agent': USER_AGENT, ...opts.headers }, signal });
  } catch (err) {
    throw new SourceError(describe(err, opts.timeoutMs));
  }
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new SourceError(`HTTP ${res.status}`, res.status, res.headers);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new SourceError(describe(err, opts.timeoutMs));
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new SourceError('the answer is not JSON');
  }
}

function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${timeoutMs} ms`;
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
  return `unreachable (${cause})`;
}

/** Joins a base URL from configuration (with or without a trailing slash) and a relative path. */
export function joinUrl(base: string, relative: string): string {
  return `${base.replace(/\/+$/, '')}/${relative.replace(/^\/+/, '')}`;
}
