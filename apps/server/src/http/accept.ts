/**
 * Whether a request's `Accept` asks for a page (HTML) or for JSON, by RFC 9110 §12.5.1: each of the two
 * takes the quality of the most specific range that matches it, and a type named outright beats one
 * reached through a wildcard at the same quality.
 *
 * - `html`: text/html (or XHTML) is preferred: a browser navigating.
 * - `json`: application/json is preferred, or HTML is not acceptable at all (`text/event-stream`).
 * - `either`: no Accept, or both only through the same wildcard (`*\/*`: curl, monitors, link previews).
 */
export type Preference = 'html' | 'json' | 'either';

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  for (const part of header.split(',').slice(0, 64)) {
    const [media = '', ...params] = part.split(';');
    const [type, subtype] = media.trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m?.[1]) q = Math.min(1, Math.max(0, Number(m[1]) || 0));
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** Quality and specificity (2 exact, 1 `type/*`, 0 `*\/*`, -1 no match) of `type/subtype` under `ranges`. */
function match(ranges: Range[], type: string, subtype: string): [number, number] {
  let best: [number, number] = [0, -1];
  for (const r of ranges) {
    const spec = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' ? 0 : -1;
    if (spec > best[1]) best = [r.q, spec];
  }
  return best;
}

export function preference(accept: string | undefined): Preference {
  if (accept === undefined || accept.trim() === '') return 'either';
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 'either';
  const html = [match(ranges, 'text', 'html'), match(ranges, 'application', 'xhtml+xml')].reduce((a, b) =>
    a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]) ? a : b,
  );
  const json = match(ranges, 'application', 'json');
  if (html[0] === 0) return 'json';
  if (html[0] !== json[0]) return html[0] > json[0] ? 'html' : 'json';
  if (html[1] !== json[1]) return html[1] > json[1] ? 'html' : 'json';
  return 'either';
}
