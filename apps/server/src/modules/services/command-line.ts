import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { type PackageRunner, runnerPackageOf, SERVICE_NAME_PATTERN, splitCommandLine, splitPackageSpec } from '@toolport/contract';

/**
 * Parsing what the admin typed in the custom install dialog (docs/console.md §5): a stdio command
 * line and KEY=VALUE lines. Pure functions; the service turns their failures into messages.
 */

export class CommandLineError extends Error {
  constructor(readonly reason: 'unterminated_quote' | 'empty' | 'no_package' | 'not_allowed' | 'shell_flag' | 'not_executable') {
    super(reason);
  }
}

/** The words of a command line (`splitCommandLine`, shared with the console); an open quote is refused. */
export function tokenize(line: string): string[] {
  const words = splitCommandLine(line);
  if (!words) throw new CommandLineError('unterminated_quote');
  return words;
}

export interface StdioCommand {
  command: string;
  args: string[];
  /** 'npm' for npx, 'uv' for uvx, '' for an absolute executable. */
  packageManager: 'npm' | 'uv' | '';
  /** The package's registry name, without the version the command line pins. */
  packageName: string;
  /** The version the command line pins (`pkg@1.2.3`, `pkg==1.2.3`), '' when none. */
  packageVersion: string;
}

function packageOf(runner: PackageRunner, args: string[]): string {
  const found = runnerPackageOf(runner, args);
  if (!found.ok) throw new CommandLineError(found.reason);
  return found.packageName;
}

/**
 * A custom stdio command: `npx …` or `uvx …` (the package found after the known flags), or the
 * absolute path of an executable file. Anything else is refused: no shell, no relative lookup.
 */
export function parseStdioCommand(line: string): StdioCommand {
  const tokens = tokenize(line.trim());
  const [first, ...args] = tokens;
  if (!first) throw new CommandLineError('empty');
  if (first === 'npx' || first === 'uvx') {
    const spec = packageOf(first, args);
    if (!spec) throw new CommandLineError('no_package');
    const { name, version } = splitPackageSpec(first, spec);
    return { command: first, args, packageManager: first === 'npx' ? 'npm' : 'uv', packageName: name, packageVersion: version };
  }
  if (!path.isAbsolute(first)) throw new CommandLineError('not_allowed');
  try {
    if (!statSync(first).isFile()) throw new CommandLineError('not_executable');
    accessSync(first, constants.X_OK);
  } catch {
    throw new CommandLineError('not_executable');
  }
  return { command: first, args, packageManager: '', packageName: '', packageVersion: '' };
}

/**
 * `KEY=VALUE` lines (the value may contain '='); lines without '=' or with an empty key or value are
 * dropped, as the console's own parser does. A JSON object (or its text) is accepted too.
 */
export function parseKeyValues(input: unknown): Record<string, string> {
  if (input === undefined || input === null) return {};
  if (typeof input === 'object' && !Array.isArray(input)) return fromObject(input as Record<string, unknown>);
  if (typeof input !== 'string') return {};
  const text = input.trim();
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return fromObject(parsed as Record<string, unknown>);
    } catch {
      // Not JSON after all: read it as lines.
    }
  }
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const eq = raw.indexOf('=');
    if (eq < 0) continue;
    const key = raw.slice(0, eq).trim();
    const value = raw.slice(eq + 1).trim();
    if (key && value) out[key] = value;
  }
  return out;
}

function fromObject(obj: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj)) {
    const key = k.trim();
    if (!key || v === null || v === undefined || typeof v === 'object') continue;
    const value = String(v);
    if (value !== '') out[key] = value;
  }
  return out;
}

/** A service name usable in `/proxy/{name}/mcp` without escaping (the console's dialogs use the same). */
export const SERVICE_NAME = SERVICE_NAME_PATTERN;

/** A URL-safe name made from a package name, an executable path or a URL host. */
export function slugFrom(source: string): string {
  const slug = source
    .replace(/[^a-zA-Z0-9_-]+/g, '-')
    .replace(/^[^a-zA-Z0-9]+/, '')
    .replace(/-+$/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return slug || 'service';
}

/** The part of a package spec that names it: `@scope/name@1.2` → `name`, `pkg==1.0` → `pkg`. */
export function packageBaseName(spec: string): string {
  const withoutVersion = spec.startsWith('@') ? spec.replace(/^(@[^@]+)@.*$/, '$1') : spec.replace(/[@=<>~![;].*$/, '');
  return withoutVersion.split('/').pop() ?? withoutVersion;
}

export const executableBaseName = (file: string): string => path.basename(file).replace(/\.[a-z]+$/i, '');
