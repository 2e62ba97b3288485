import { isNpmName } from '../sources/npm.js';
import { isPypiName } from '../sources/pypi.js';
import { InstallError, type PackagePlan } from './types.js';

/** A version that can be pinned: no ranges, no flags, no paths. */
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
export const isPinnableVersion = (v: string) => VERSION.test(v);

/** `name`, `name@1.2.3`, `@scope/name@1.2.3`; tags such as `latest` mean the newest release. */
export function parseNpmSpec(spec: string): { identifier: string; version: string } {
  const at = spec.lastIndexOf('@');
  const [identifier, version] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, ''];
  if (!isNpmName(identifier)) throw new InstallError('install.not_npm_package', { spec });
  if (version && !isPinnableVersion(version)) throw new InstallError('install.npm_version_range', { spec });
  return { identifier, version: version === 'latest' ? '' : version };
}

/** `name`, `name==1.2`, `name@1.2` (uvx); extras and ranges are refused. */
export function parsePypiSpec(spec: string): { identifier: string; version: string } {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:(?:==|@)(.+))?$/.exec(spec.trim());
  if (!match?.[1] || !isPypiName(match[1])) throw new InstallError('install.not_pypi_package', { spec });
  const version = match[2] ?? '';
  if (version && !isPinnableVersion(version)) throw new InstallError('install.pypi_version_range', { spec });
  return { identifier: match[1], version: version === 'latest' ? '' : version };
}

const NPX_VALUE_FLAGS = new Set(['--registry', '--cache', '--userconfig', '--prefix', '--node-options', '--workspace', '-w']);
const UVX_VALUE_FLAGS = new Set([
  '-p',
  '--python',
  '--index',
  '--index-url',
  '--default-index',
  '-i',
  '--extra-index-url',
  '--cache-dir',
  '--directory',
  '--project',
  '--config-file',
  '--python-preference',
]);
/** uvx options that change what is installed beyond one package: a plain install would differ. */
const UVX_REFUSED = new Set(['--with', '--with-editable', '--with-requirements', '-c', '--constraints', '--overrides']);

/**
 * Splits `--flag=value` and walks flags until the first positional word. `at` tells where a flag's value is:
 * its index in `args`, and whether it is written `--flag=value` there (`inline`).
 */
function walk(
  args: string[],
  valueFlags: Set<string>,
  onFlag: (flag: string, value: string | undefined, at: { index: number; inline: boolean }) => void,
): number {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') return i + 1;
    if (!arg.startsWith('-') || arg === '-') return i;
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (eq > 0) onFlag(flag, arg.slice(eq + 1), { index: i, inline: true });
    else if (valueFlags.has(flag)) {
      onFlag(flag, args[i + 1], { index: i + 1, inline: false });
      i += 1;
    } else onFlag(flag, undefined, { index: i, inline: false });
  }
  return args.length;
}

/**
 * What `npx …` would run: the package (from `-p`/`--package` or the first word), its executable
 * and the arguments after it. The gateway installs the package once instead of running npx.
 */
export function planFromNpx(args: string[]): PackagePlan {
  let fromFlag = '';
  const start = walk(args, new Set([...NPX_VALUE_FLAGS, '-p', '--package']), (flag, value) => {
    if (flag === '-c' || flag === '--call') throw new InstallError('install.npx_shell');
    if ((flag === '-p' || flag === '--package') && value) {
      if (fromFlag) throw new InstallError('install.npx_several_packages');
      fromFlag = value;
    }
  });
  const first = args[start];
  if (!first) throw new InstallError('install.npx_no_package');
  const rest = args.slice(start + 1);
  if (fromFlag) return { kind: 'npm', ...parseNpmSpec(fromFlag), entry: first, args: rest };
  return { kind: 'npm', ...parseNpmSpec(first), entry: '', args: rest };
}

/** What `uvx …` would run: the package (from `--from` or the command word), its command and the arguments after it. */
export function planFromUvx(args: string[]): PackagePlan {
  let from = '';
  const start = walk(args, new Set([...UVX_VALUE_FLAGS, ...UVX_REFUSED, '--from']), (flag, value) => {
    if (UVX_REFUSED.has(flag)) throw new InstallError('install.uvx_refused_flag', { flag });
    if (flag === '--from' && value) from = value;
  });
  const first = args[start];
  if (!first) throw new InstallError('install.uvx_no_command');
  const rest = args.slice(start + 1);
  if (from) return { kind: 'pypi', ...parsePypiSpec(from), entry: first, args: rest };
  const pkg = parsePypiSpec(first);
  return { kind: 'pypi', ...pkg, entry: '', args: rest };
}

/**
 * A typed `npx …`/`uvx …` command line with its package pinned to `version` (the one installed), flags and
 * arguments as typed: what an export writes, so that an import installs the same release (decision 0035).
 * Undefined for any other command, or one whose package cannot be read.
 */
export function pinTypedCommand(words: string[], version: string): string[] | undefined {
  const [runner, ...args] = words;
  const npm = runner === 'npx';
  if (!npm && runner !== 'uvx') return undefined;
  const named = npm ? new Set(['-p', '--package']) : new Set(['--from']);
  const valueFlags = npm ? new Set([...NPX_VALUE_FLAGS, ...named]) : new Set([...UVX_VALUE_FLAGS, ...UVX_REFUSED, ...named]);
  let spec = undefined as { index: number; inline: boolean; flag: string } | undefined;
  const start = walk(args, valueFlags, (flag, value, at) => {
    if (named.has(flag) && value) spec = { ...at, flag };
  });
  const at = spec ?? (start < args.length ? { index: start, inline: false, flag: '' } : undefined);
  if (!at) return undefined;
  const written = args[at.index] as string;
  const current = at.inline ? written.slice(at.flag.length + 1) : written;
  let identifier: string;
  try {
    identifier = (npm ? parseNpmSpec(current) : parsePypiSpec(current)).identifier;
  } catch {
    return undefined;
  }
  // uvx reads `pkg@1.2` as a command word and `pkg==1.2` after --from.
  const pinned = !npm && spec ? `${identifier}==${version}` : `${identifier}@${version}`;
  const out = [...args];
  out[at.index] = at.inline ? `${at.flag}=${pinned}` : pinned;
  return [runner, ...out];
}
