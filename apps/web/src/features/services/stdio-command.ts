import { runnerPackageOf, splitCommandLine } from '@toolport/contract';

/**
 * The stdio command of the custom install dialog (docs/console.md §5): `npx …` or `uvx …` with a package
 * after the known flags; the server also accepts the absolute path of an executable an admin chose
 * (docs/api.md), so the dialog does too. The server checks again; this only saves a round trip.
 */

export type StdioCommandError = 'commandRequired' | 'commandNotAllowed' | 'commandParseFailed';

export type StdioCommandCheck =
  | { ok: true; runner: 'npx' | 'uvx' | 'executable'; packageName: string; packageManager: 'npm' | 'uv' | '' }
  | { ok: false; error: StdioCommandError };

/** The words of a command line as the server reads them; null when a quote is left open. */
export const tokenizeCommand = splitCommandLine;

export function checkStdioCommand(line: string): StdioCommandCheck {
  const text = line.trim();
  if (!text) return { ok: false, error: 'commandRequired' };
  const isRunner = /^(npx|uvx)(\s|$)/.test(text);
  if (!isRunner && !text.startsWith('/')) return { ok: false, error: 'commandNotAllowed' };
  const words = tokenizeCommand(text);
  if (!words?.length) return { ok: false, error: 'commandParseFailed' };
  const [first, ...args] = words as [string, ...string[]];
  if (first !== 'npx' && first !== 'uvx') return { ok: true, runner: 'executable', packageName: '', packageManager: '' };
  const found = runnerPackageOf(first, args);
  if (!found.ok) return { ok: false, error: 'commandNotAllowed' };
  const { packageName } = found;
  if (!packageName) return { ok: false, error: 'commandParseFailed' };
  return { ok: true, runner: first, packageName, packageManager: first === 'npx' ? 'npm' : 'uv' };
}

/** A stored command and its arguments as one line again (read-only in the edit dialog), quoting what needs it. */
export function commandLineOf(command: string, argsJson: string): string {
  let args: unknown = [];
  try {
    args = JSON.parse(argsJson || '[]');
  } catch {
    args = [];
  }
  const words = [command, ...(Array.isArray(args) ? args.map(String) : [])];
  return words.map((w) => (w === '' || /[\s'"\\]/.test(w) ? `'${w.replaceAll("'", `'\\''`)}'` : w)).join(' ');
}
