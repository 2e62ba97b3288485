import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { installEnv } from './install-env.js';
import { CommandFailedError, runCommand } from './run-command.js';
import {
  InstallError,
  type InstalledPackage,
  type InstallerOptions,
  PackageNotFoundError,
  type PackagePlan,
  saysNotFound,
} from './types.js';

/** The executable of an installed package, chosen the way npx chooses it. */
export function pickBin(pkg: { name?: unknown; bin?: unknown }, identifier: string, wanted: string): string {
  const base = identifier.split('/').pop() ?? identifier;
  if (typeof pkg.bin === 'string' && pkg.bin) {
    if (wanted && wanted !== base) throw new InstallError('install.npm_no_such_bin', { package: identifier, name: wanted });
    return pkg.bin;
  }
  const bins = pkg.bin && typeof pkg.bin === 'object' ? Object.entries(pkg.bin as Record<string, unknown>) : [];
  const named = (name: string) => bins.find(([n, file]) => n === name && typeof file === 'string')?.[1] as string | undefined;
  if (wanted) {
    const file = named(wanted);
    if (!file) throw new InstallError('install.npm_no_such_bin', { package: identifier, name: wanted });
    return file;
  }
  if (bins.length === 1 && typeof bins[0]?.[1] === 'string') return bins[0][1];
  const file = named(base);
  if (file) return file;
  if (bins.length === 0) throw new InstallError('install.npm_no_bin', { package: identifier });
  throw new InstallError('install.npm_several_bins', { package: identifier, names: bins.map(([n]) => n).join(', ') });
}

/** A script with a shebang that is not Node's runs on its own; everything else runs with `node`. */
function runsWithNode(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(128);
    const n = readSync(fd, head, 0, head.length, 0);
    const first = head.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    return !first.startsWith('#!') || /\bnode\b/.test(first);
  } finally {
    closeSync(fd);
  }
}

/**
 * `npm install --prefix <dir>` of one pinned package against the configured registry; the package
 * is then started with `node <its bin>`, never through npx at request time (docs/architecture.md §3).
 */
export async function installNpm(plan: PackagePlan, opts: InstallerOptions): Promise<InstalledPackage> {
  const { pkgDir, pkg } = await npmInstallFiles(plan, opts);
  const bin = path.resolve(pkgDir, pickBin(pkg, plan.identifier, plan.entry));
  if (!bin.startsWith(`${pkgDir}${path.sep}`) || !existsSync(bin))
    throw new InstallError('install.executable_missing', { package: plan.identifier, path: bin });
  const version = typeof pkg.version === 'string' ? pkg.version : plan.version;
  const node = runsWithNode(bin);
  return {
    command: node ? 'node' : bin,
    args: node ? [bin, ...plan.args] : plan.args,
    version,
    manifest: { kind: 'npm', identifier: plan.identifier, version, entry: plan.entry || '', args: plan.args },
  };
}

/** The installed package's directory and package.json, after `npm install --prefix` of the pinned package. */
export async function npmInstallFiles(
  plan: Pick<PackagePlan, 'identifier' | 'version'>,
  opts: InstallerOptions,
): Promise<{ pkgDir: string; pkg: { name?: unknown; version?: unknown; bin?: unknown } }> {
  mkdirSync(opts.dir, { recursive: true });
  // A package.json of its own keeps npm from looking for a project in the directories above.
  writeFileSync(path.join(opts.dir, 'package.json'), `${JSON.stringify({ name: 'toolport-installed-package', private: true }, null, 2)}\n`);
  const spec = plan.version ? `${plan.identifier}@${plan.version}` : plan.identifier;
  const args = ['install', '--prefix', opts.dir, '--no-audit', '--no-fund', '--save-exact', '--registry', opts.registry, spec];
  opts.log(`$ npm ${args.join(' ')}`);
  let notFound = false;
  const onLine = (line: string) => {
    notFound ||= saysNotFound(line);
    opts.log(line);
  };
  try {
    await runCommand('npm', args, { cwd: opts.dir, env: installEnv(), timeoutMs: opts.timeoutMs, onLine, signal: opts.signal });
  } catch (err) {
    if (notFound && err instanceof CommandFailedError) throw new PackageNotFoundError('npm', plan.identifier, plan.version);
    throw err;
  }

  const pkgDir = path.join(opts.dir, 'node_modules', ...plan.identifier.split('/'));
  let pkg: { name?: unknown; version?: unknown; bin?: unknown };
  try {
    pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  } catch {
    throw new InstallError('install.npm_package_absent', { package: plan.identifier, dir: pkgDir });
  }
  return { pkgDir, pkg };
}
