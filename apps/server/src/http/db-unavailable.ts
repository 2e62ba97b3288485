/**
 * Whether an error means the database cannot be reached right now (a connection refused, reset or
 * timed out, the server shutting down, SQLite busy) rather than a bug: the client is told to retry
 * (503) instead of getting a 500. Follows `cause` chains, as drivers and Kysely wrap errors.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // db/availability.ts: the database did not answer within the call path's bound, or is known to be away.
  'DATABASE_UNAVAILABLE',
]);
/** PostgreSQL SQLSTATE: class 08 (connection exception), 57P01-57P03 (shutdown, cannot connect now), 53300 (too many connections). */
const PG_STATES = /^(08\d{3}|57P0[123]|53300)$/;
const MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connection (?:was )?(?:closed|ended)|Client has encountered a connection error|server closed the connection|query read timeout/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (typeof e !== 'object') return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || PG_STATES.test(code) || code === 'SQLITE_BUSY')) return true;
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnavailable)) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && MESSAGES.test(message)) return true;
  }
  return false;
}
