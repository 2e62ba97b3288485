/** Schemes a readme's link and image addresses may use (docs/console.md §5, Markdown). */
export const SAFE_URL_PROTOCOLS = ['http', 'https', 'irc', 'ircs', 'mailto', 'xmpp'] as const;

/**
 * A readme address as it may be rendered: kept when it has no scheme (relative paths, #anchors,
 * ?queries) or one of the safe ones, blanked otherwise (javascript:, data:, vbscript: …).
 */
export function safeUrl(url: string): string {
  const colon = url.indexOf(':');
  // No colon, or one that comes after a path, query or fragment started: no scheme.
  const firstDelimiter = url.search(/[/?#]/);
  if (colon === -1 || (firstDelimiter !== -1 && colon > firstDelimiter)) return url;
  const scheme = url.slice(0, colon).trim().toLowerCase();
  return (SAFE_URL_PROTOCOLS as readonly string[]).includes(scheme) ? url : '';
}
