import type { MessageKey, MessageParams } from '../i18n/index.js';

/**
 * An error meant for the client: a status, a message key translated at the edge, and an optional
 * machine-readable code and data. Anything else thrown becomes a 500 without details.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly key: MessageKey,
    readonly params?: MessageParams,
    readonly extra?: { code?: string; data?: unknown; headers?: Record<string, string>; field?: string },
  ) {
    super(key);
    this.name = 'AppError';
  }

  /** The same error, blamed on the request's `field` (the envelope's `field`, decision 0058). */
  inField(field: string): AppError {
    return new AppError(this.status, this.key, this.params, { ...this.extra, field });
  }
}

/**
 * Runs `check` and marks an AppError it throws (or its promise rejects with) as the fault of the request's
 * `field`, so a dialog can show the refusal next to that field (decision 0058). Other errors pass unchanged.
 */
export function inField<T>(field: string, check: () => T): T {
  const blame = (err: unknown): never => {
    throw err instanceof AppError && !err.extra?.field ? err.inField(field) : err;
  };
  try {
    const result = check();
    return (result instanceof Promise ? result.catch(blame) : result) as T;
  } catch (err) {
    return blame(err);
  }
}

export const badRequest = (key: MessageKey, params?: MessageParams, code?: string) =>
  new AppError(400, key, params, code ? { code } : undefined);
export const unauthorized = (key: MessageKey = 'auth.token_invalid') => new AppError(401, key);
export const forbidden = (key: MessageKey = 'auth.forbidden', params?: MessageParams) => new AppError(403, key, params);
export const notFound = (key: MessageKey = 'error.not_found', params?: MessageParams) => new AppError(404, key, params);
export const conflict = (key: MessageKey, params?: MessageParams) => new AppError(409, key, params);
export const tooMany = (key: MessageKey, seconds: number) =>
  new AppError(429, key, { seconds }, { headers: { 'retry-after': String(seconds) } });
