/**
 * The top-level `id` of a JSON-RPC response whose text is too large or not valid JSON, read from
 * its first bytes: enough to answer the request it belonged to with an error at once instead of
 * letting it wait for its timeout. Only keys of the outermost object count (an `id` inside a result
 * is skipped); a message naming a `method` is a request or notification, not an answer.
 */
export function responseIdOf(text: string): number | string | undefined {
  let depth = 0;
  let i = 0;
  let id: number | string | undefined;
  let expectKey = false;
  let key: string | undefined;
  const n = text.length;
  const readString = (): string | undefined => {
    // At the opening quote; returns the raw content, or undefined when the text ends inside it.
    let out = '';
    for (i += 1; i < n; i += 1) {
      const c = text[i];
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i += 1;
      } else if (c === '"') {
        i += 1;
        return out;
      } else out += c;
    }
    return undefined;
  };
  while (i < n) {
    const c = text[i] as string;
    if (c === '"') {
      const value = readString();
      if (value === undefined) break;
      if (depth === 1 && expectKey) {
        key = value;
        expectKey = false;
        if (key === 'method') return undefined;
      } else if (depth === 1 && key === 'id') {
        id = value;
        key = undefined;
      }
      continue;
    }
    if (c === '{' || c === '[') {
      depth += 1;
      if (depth === 1) expectKey = c === '{';
      if (depth > 1) key = undefined;
    } else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) break;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
      key = undefined;
    } else if (depth === 1 && key === 'id' && /[-0-9]/.test(c)) {
      const m = /^-?\d+/.exec(text.slice(i, i + 24));
      if (m) {
        id = Number(m[0]);
        i += m[0].length;
        key = undefined;
        continue;
      }
    }
    i += 1;
  }
  return id;
}
