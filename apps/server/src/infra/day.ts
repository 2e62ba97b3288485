const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * `YYYY-MM-DD` of `at` in an IANA time zone: the day a counted request belongs to (the TimeZone
 * preference decides when a user's daily limit starts again). en-CA formats dates that way.
 */
export function dayIn(timeZone: string, at = Date.now()): string {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, f);
  }
  return f.format(at);
}
