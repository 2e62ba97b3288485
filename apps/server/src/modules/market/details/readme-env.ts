import { PLACEHOLDER_MARKERS } from '@toolport/contract';
import { isRecord } from '../sources/links.js';

/**
 * What a readme says about the environment variables of a package. Two kinds of evidence, in
 * falling order of trust: `mcpServers` configuration blocks (the author wrote the exact config),
 * and mentions (`export FOO=…`, `process.env.FOO`, a documented list of variables).
 */

/** One variable as one piece of evidence describes it; undefined means "this evidence does not say". */
export interface EnvCandidate {
  name: string;
  origin: 'registry' | 'config' | 'mention';
  description?: string;
  isSecret?: boolean;
  optional?: boolean;
  defaultValue?: string;
}

export interface CodeBlock {
  lang: string;
  body: string;
}

/** Fenced code blocks (``` or ~~~), and the prose lines outside them. */
export function splitMarkdown(markdown: string): { blocks: CodeBlock[]; prose: string[] } {
  const blocks: CodeBlock[] = [];
  const prose: string[] = [];
  let open: { fence: string; lang: string; lines: string[] } | null = null;
  for (const line of markdown.split(/\r?\n/)) {
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (!open && fence?.[1]) open = { fence: fence[1], lang: (fence[2] ?? '').toLowerCase(), lines: [] };
    else if (open && fence?.[1]?.startsWith(open.fence) && line.trim() === fence[1]) {
      blocks.push({ lang: open.lang, body: open.lines.join('\n') });
      open = null;
    } else if (open) open.lines.push(line);
    else prose.push(line);
  }
  return { blocks, prose };
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;
export const looksSecret = (name: string) => SECRET_NAME.test(name);

/** The console's own markers of an unfilled value (docs/console.md §5), plus the usual sample forms. */
const SAMPLE_MARKERS = [...PLACEHOLDER_MARKERS, 'your_', 'xxx', '...', '/path/to', 'example', 'changeme', '12345'];

/** True for sample values such as `<YOUR_TOKEN>`, `${input:token}`, `xoxb-your-bot-token` or `T01234567`. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (!v) return true;
  if (/^<.*>$/.test(v) || /\$\{[^}]*\}/.test(v) || /^\{.*\}$/.test(v) || /\byour\b/.test(v) || /here$/.test(v)) return true;
  return SAMPLE_MARKERS.some((m) => v.includes(m));
}

/** "optional" or a documented default makes a variable optional; "required" makes it required. */
export function optionalFrom(text: string | undefined): boolean | undefined {
  if (!text) return undefined;
  if (/\boptional\b/i.test(text)) return true;
  if (/\brequired\b/i.test(text)) return false;
  if (/\bdefaults?\b/i.test(text)) return true;
  return undefined;
}

/** Readme sample values count as defaults only when they are not samples and not secrets. */
function sampleDefault(name: string, value: string): string | undefined {
  return looksSecret(name) || isPlaceholder(value) ? undefined : value;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Variables of `env` objects in JSON blocks shaped like Claude Desktop, Cursor or VS Code configuration. */
export function configBlockVars(blocks: CodeBlock[]): EnvCandidate[] {
  const out: EnvCandidate[] = [];
  for (const block of blocks) {
    if (!['json', 'jsonc', 'json5', ''].includes(block.lang) || !/"env"\s*:/.test(block.body)) continue;
    const comments = trailingComments(block.body);
    const doc = parseLooseJson(block.body) ?? parseLooseJson(`{${block.body}}`);
    const inputs = vsCodeInputs(doc);
    for (const env of envObjects(doc)) {
      for (const [name, raw] of Object.entries(env)) {
        if (!ENV_NAME.test(name)) continue;
        const value = typeof raw === 'string' ? raw : String(raw ?? '');
        const input = inputs.get(/^\$\{input:([^}]+)\}$/.exec(value)?.[1] ?? '');
        const comment = comments.get(name);
        const description = comment ?? input?.description;
        out.push({
          name,
          origin: 'config',
          description,
          isSecret: input?.password === true ? true : undefined,
          optional: optionalFrom(description),
          defaultValue: input ? input.default || undefined : sampleDefault(name, value),
        });
      }
    }
  }
  return out;
}

/** `// comment` after `"NAME": "value",` on the same line: authors mark optional variables this way. */
function trailingComments(body: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of body.split('\n')) {
    const name = /^\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*:/.exec(line)?.[1];
    const comment = name ? commentOf(line) : '';
    if (name && comment) out.set(name, comment);
  }
  return out;
}

/** The text after a `//` that is not inside a string ("https://…" is not a comment). */
function commentOf(line: string): string {
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === '"') inString = !inString;
    else if (!inString && line[i] === '/' && line[i + 1] === '/') return line.slice(i + 2).trim();
  }
  return '';
}

function envObjects(doc: unknown): Record<string, unknown>[] {
  if (!isRecord(doc)) return [];
  const nested = isRecord(doc.mcp) ? doc.mcp : {};
  const maps = [doc.mcpServers, doc.servers, nested.servers, nested.mcpServers].filter(isRecord);
  const servers = maps.flatMap((m) => Object.values(m)).filter(isRecord);
  // A lone server entry (`{"command": …, "env": {…}}`) as `claude mcp add-json` takes it.
  if (servers.length === 0 && ('command' in doc || 'url' in doc)) servers.push(doc);
  return servers.map((s) => s.env).filter(isRecord);
}

interface VsCodeInput {
  description?: string;
  password?: boolean;
  default?: string;
}

function vsCodeInputs(doc: unknown): Map<string, VsCodeInput> {
  const out = new Map<string, VsCodeInput>();
  if (!isRecord(doc)) return out;
  const list = doc.inputs ?? (isRecord(doc.mcp) ? doc.mcp.inputs : undefined);
  for (const item of Array.isArray(list) ? list : []) {
    if (!isRecord(item) || typeof item.id !== 'string') continue;
    out.set(item.id, {
      description: typeof item.description === 'string' ? item.description : undefined,
      password: item.password === true,
      default: typeof item.default === 'string' ? item.default : undefined,
    });
  }
  return out;
}

/** JSON as people write it in readmes: with // and /* comments and trailing commas. */
export function parseLooseJson(text: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  try {
    return JSON.parse(out.replace(/,(\s*[}\]])/g, '$1'));
  } catch {
    return undefined;
  }
}
