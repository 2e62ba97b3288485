import { type CodeBlock, type EnvCandidate, isPlaceholder, looksSecret, optionalFrom } from './readme-env.js';

/**
 * Environment variables a readme mentions outside configuration blocks: shell assignments in
 * code blocks, reads in code (`process.env.FOO`, `os.environ["FOO"]`), and documented lists or
 * tables of variables (`` - `FOO_TOKEN`: what it is ``), which also supply descriptions.
 */

/** Variables every process has; a readme that mentions them is not asking for configuration. */
const AMBIENT = new Set(['PATH', 'HOME', 'USER', 'SHELL', 'PWD', 'TERM', 'LANG', 'LC_ALL', 'TMPDIR', 'NODE_ENV', 'NODE_OPTIONS', 'DEBUG']);
const SHELL_LANGS = new Set([
  '',
  'bash',
  'sh',
  'shell',
  'zsh',
  'console',
  'terminal',
  'env',
  'dotenv',
  'ini',
  'text',
  'powershell',
  'ps1',
  'cmd',
  'dockerfile',
]);

const ASSIGNMENT = /(?:^|[\s;&|])(?:export\s+|set\s+|\$env:)?([A-Z][A-Z0-9_]{2,})=("[^"]*"|'[^']*'|[^\s;&|]*)/g;
const CODE_READS =
  /process\.env\.([A-Z][A-Z0-9_]{2,})|process\.env\[\s*['"]([A-Z][A-Z0-9_]{2,})['"]\s*\]|os\.environ(?:\.get)?[[(]\s*['"]([A-Z][A-Z0-9_]{2,})['"]|os\.getenv\(\s*['"]([A-Z][A-Z0-9_]{2,})['"]/g;
/** `- \`NAME\`: text`, `1. **\`NAME\`** - text` */
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+\**`([A-Z][A-Z0-9_]{2,})`\**\s*(?:[:：]|\s[-–—]\s)\s*(.+)$/;
/** `| \`NAME\` | text | … |` */
const TABLE_ROW = /^\s*\|\s*\**`?([A-Z][A-Z0-9_]{2,})`?\**\s*\|(.+)\|\s*$/;

export function mentionedVars(blocks: CodeBlock[], prose: string[]): EnvCandidate[] {
  const out: EnvCandidate[] = [];
  const add = (c: Omit<EnvCandidate, 'origin'>) => {
    if (!AMBIENT.has(c.name)) out.push({ ...c, origin: 'mention' });
  };

  for (const block of blocks) {
    if (!SHELL_LANGS.has(block.lang)) continue;
    for (const m of block.body.matchAll(ASSIGNMENT)) {
      const name = m[1] as string;
      const value = (m[2] ?? '').replace(/^["']|["']$/g, '');
      add({ name, defaultValue: looksSecret(name) || isPlaceholder(value) ? undefined : value });
    }
  }
  const everything = [...blocks.map((b) => b.body), ...prose].join('\n');
  for (const m of everything.matchAll(CODE_READS)) {
    const name = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (name) add({ name });
  }
  for (const line of prose) {
    const doc = documented(line);
    if (doc) add(doc);
  }
  return out;
}

/** A documented variable; lists and tables only introduce names that look like variables (with an underscore). */
function documented(line: string): Omit<EnvCandidate, 'origin'> | null {
  const item = LIST_ITEM.exec(line);
  const row = item ? null : TABLE_ROW.exec(line);
  const name = item?.[1] ?? row?.[1];
  if (!name?.includes('_')) return null;
  const text = item ? (item[2] ?? '') : longestCell(row?.[2] ?? '');
  const description = text.replace(/\*\*/g, '').trim();
  return { name, description, optional: optionalFrom(item ? description : line) };
}

function longestCell(cells: string): string {
  return cells
    .split('|')
    .map((c) => c.trim())
    .reduce((a, b) => (b.length > a.length ? b : a), '');
}
