const two = (n: number) => String(n).padStart(2, '0');

/**
 * A log line's time as `YYYY-MM-DD HH:mm:ss` in the browser's time zone: the same in both languages, sortable
 * by eye, and exact to the second, which a log reader needs more than a friendly date.
 */
export function formatLogTime(ms: number): string {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '';
  const date = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
  return `${date} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
