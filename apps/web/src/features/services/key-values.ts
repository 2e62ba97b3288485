/**
 * Multi-line `KEY=VALUE` text of the environments and headers fields (docs/console.md §5): the value may
 * contain '='; a line without '=' or with an empty key or value is dropped.
 */
export function parseKeyValueLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (key && value) out[key] = value;
  }
  return out;
}

/** The same values as lines again, for the edit dialog's fields. */
export function formatKeyValueLines(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}

/** A service's `default_envs_json` / `headers_json`: a JSON object of strings; anything else reads as empty. */
export function parseJsonObject(text: string | undefined): Record<string, string> {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (value !== null && typeof value !== 'object') out[key] = String(value);
    }
    return out;
  } catch {
    return {};
  }
}
