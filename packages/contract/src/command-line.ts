/**
 * The stdio command line of the custom install dialog (docs/console.md §5), read the same way by the
 * console (to answer before a round trip) and the server (which decides). Pure: no file system here.
 */

/**
 * Splits a command line the way a POSIX shell splits words, without expanding anything: single
 * quotes keep everything literally, double quotes let a backslash escape `"`, `\`, `$` and a
 * backquote, and outside quotes a backslash escapes any character. Null when a quote is left open.
 */
export function splitCommandLine(line: string): string[] | null {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return null;
      word += line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      i += 1;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) i += 1;
        word += line[i];
        i += 1;
      }
      if (i >= line.length) return null;
    } else if (c === '\\' && i + 1 < line.length) {
      i += 1;
      word += line[i];
    } else {
      word += c;
    }
  }
  if (inWord) words.push(word);
  return words;
}

export type PackageRunner = 'npx' | 'uvx';

/** Flags of npx and uvx that take the next word as their value. */
const VALUE_FLAGS: Record<PackageRunner, ReadonlySet<string>> = {
  npx: new Set(['-p', '--package', '--registry', '--cache', '--userconfig', '--prefix']),
  uvx: new Set([
    '--from',
    '--with',
    '--with-editable',
    '--with-requirements',
    '-p',
    '--python',
    '--index',
    '--index-url',
    '--extra-index-url',
    '--default-index',
    '-i',
    '--constraints',
    '-c',
    '--overrides',
    '--cache-dir',
    '--directory',
    '--project',
    '--config-file',
  ]),
};
/** Of those, the flags whose value names the package itself rather than the command to run from it. */
const PACKAGE_FLAGS: Record<PackageRunner, ReadonlySet<string>> = {
  npx: new Set(['-p', '--package']),
  uvx: new Set(['--from']),
};

/** What a runner's arguments name: the package, or a refusal because `npx -c` would run a shell. */
export type RunnerPackage = { ok: true; packageName: string } | { ok: false; reason: 'shell_flag' };

/**
 * The package `npx …` / `uvx …` runs: a package flag's value, else the first word that is not a flag
 * (empty when there is none). `npx -c` / `--call` runs its argument through a shell and is refused:
 * commands are argument arrays only.
 */
export function runnerPackageOf(runner: PackageRunner, args: readonly string[]): RunnerPackage {
  let named = '';
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (!arg.startsWith('-')) return { ok: true, packageName: named || arg };
    if (runner === 'npx' && (arg === '-c' || arg === '--call' || arg.startsWith('--call='))) return { ok: false, reason: 'shell_flag' };
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (eq > 0) {
      if (PACKAGE_FLAGS[runner].has(flag)) named ||= arg.slice(eq + 1);
      continue;
    }
    if (VALUE_FLAGS[runner].has(flag)) {
      if (PACKAGE_FLAGS[runner].has(flag)) named ||= args[i + 1] ?? '';
      i += 1;
    }
  }
  return { ok: true, packageName: named };
}

/** A package spec split into the name a registry knows and the version it pins ('' when it pins none). */
export interface PackageSpecParts {
  name: string;
  version: string;
}

/**
 * `@scope/name@1.2.3` → `@scope/name` + `1.2.3` (a scoped name's leading `@` is not a version separator),
 * `name@latest` → `name` + `latest`; for uvx, `pkg==1.0` or `pkg@1.0` → `pkg` + `1.0`, and a range
 * (`pkg>=1`) or extras (`pkg[cli]`) keep the bare name with no pinned version.
 */
export function splitPackageSpec(runner: PackageRunner, spec: string): PackageSpecParts {
  const text = spec.trim();
  if (runner === 'npx') {
    const at = text.indexOf('@', text.startsWith('@') ? 1 : 0);
    return at > 0 ? { name: text.slice(0, at), version: text.slice(at + 1) } : { name: text, version: '' };
  }
  const pinned = /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:==|@)\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)$/.exec(text);
  if (pinned) return { name: pinned[1] as string, version: pinned[2] as string };
  return { name: /^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(text)?.[0] ?? text, version: '' };
}
