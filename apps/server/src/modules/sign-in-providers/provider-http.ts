import { AppError } from '../../http/errors.js';
import { configuredFetch } from '../../infra/outbound.js';
import { VERSION } from '../../version.js';

/** Every call to a provider ends within this time: a hung provider must not hold a sign-in open. */
export const PROVIDER_TIMEOUT_MS = 10_000;

/** GitHub refuses API calls without a User-Agent. */
export const USER_AGENT = `toolport/${VERSION}`;

export interface ProviderAnswer {
  status: number;
  body: unknown;
}

/**
 * One HTTP exchange with a provider, answered as status + parsed JSON. Failures to get an answer
 * become 504/502 errors naming the provider; what the answer means is the caller's business.
 * Neither the request (it may carry the client secret) nor the answer is logged.
 */
export async function callProvider(provider: string, url: string, init: RequestInit): Promise<ProviderAnswer> {
  const signal = AbortSignal.timeout(PROVIDER_TIMEOUT_MS);
  let text: string;
  let status: number;
  try {
    // Provider endpoints never redirect: any redirect is refused (infra/outbound.ts passes 'error' through).
    const res = await configuredFetch(url, { ...init, signal, redirect: 'error' });
    status = res.status;
    text = await res.text();
  } catch (err) {
    throw unreachable(provider, err);
  }
  try {
    return { status, body: JSON.parse(text) };
  } catch {
    throw badAnswer(provider, `HTTP ${status}, not JSON`);
  }
}

export const badAnswer = (provider: string, detail: string) =>
  new AppError(502, 'oauth.provider_bad_answer', { provider, detail }, { code: 'oauth_provider_error' });

/** The provider answered and said no: its own error code and description, shown as they are. */
export function refused(provider: string, error: unknown, description: unknown): AppError {
  const reason = typeof description === 'string' && description ? `${String(error)} (${description})` : String(error);
  return new AppError(
    400,
    'oauth.exchange_refused',
    { provider, reason: printable(reason) },
    { code: 'oauth_exchange_refused', data: { error: printable(String(error)) } },
  );
}

function unreachable(provider: string, err: unknown): AppError {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return new AppError(
      504,
      'oauth.provider_timeout',
      { provider, seconds: PROVIDER_TIMEOUT_MS / 1000 },
      { code: 'oauth_provider_timeout' },
    );
  }
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const detail = (cause as NodeJS.ErrnoException)?.code ?? (cause instanceof Error ? cause.message : String(cause));
  return new AppError(502, 'oauth.provider_unreachable', { provider, detail: printable(detail) }, { code: 'oauth_provider_error' });
}

/** Text from outside, made safe to put in a message: no control characters, bounded length. */
const printable = (text: string): string => text.replace(/\p{Cc}+/gu, ' ').slice(0, 300);

/** A configured base URL (with or without a trailing slash) and a path below it. */
export const joinUrl = (base: string, path: string): string => `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;

/** A JSON object as a record, or an empty one: provider answers are read field by field. */
export const asRecord = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
