import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { installEnv } from './install-env.js';
import { findExecutable, isExecutableFile } from './path-lookup.js';
import { CommandFailedError, runCommand } from './run-command.js';
import {
  InstallError,
  type InstalledPackage,
  type InstallerOptions,
  PackageNotFoundError,
  type PackagePlan,
  saysNotFound,
} from './types.js';

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');
const BIN = process.platform === 'win32' ? 'Scripts' : 'bin';

/** The `.dist-info` directory of an installed distribution, found in the venv's site-packages. */
function distInfoOf(venv: string, identifier: string): string {
  const libs = [path.join(venv, 'lib'), path.join(venv, 'Lib')].filter(existsSync);
  const wanted = normalize(identifier);
  for (const lib of libs) {
    const sites =
      path.basename(lib) === 'Lib' ? [path.join(lib, 'site-packages')] : readdirSync(lib).map((py) => path.join(lib, py, 'site-packages'));
    for (const site of sites.filter(existsSync)) {
      const hit = readdirSync(site).find((d) => d.endsWith('.dist-info') && normalize(d.replace(/-[^-]+\.dist-info$/, '')) === wanted);
      if (hit) return path.join(site, hit);
    }
  }
  throw new InstallError('install.pypi_package_absent', { package: identifier, dir: venv });
}

/** `[console_scripts]` names of entry_points.txt. */
export function consoleScripts(entryPoints: string): string[] {
  const names: string[] = [];
  let inSection = false;
  for (const raw of entryPoints.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('[')) inSection = line === '[console_scripts]';
    else if (inSection && line.includes('=')) names.push(line.slice(0, line.indexOf('=')).trim());
  }
  return names;
}

/** The console script to run, chosen the way uvx chooses it: the one named like the package, else the only one. */
export function pickScript(scripts: string[], identifier: string, wanted: string): string {
  if (wanted) {
    if (!scripts.includes(wanted)) throw new InstallError('install.pypi_no_such_script', { package: identifier, name: wanted });
    return wanted;
  }
  const same = scripts.find((s) => normalize(s) === normalize(identifier));
  if (same) return same;
  if (scripts.length === 1 && scripts[0]) return scripts[0];
  if (scripts.length === 0) throw new InstallError('install.pypi_no_script', { package: identifier });
  throw new InstallError('install.pypi_several_scripts', { package: identifier, names: scripts.join(', ') });
}

/** pip refuses plain-http indexes other than localhost unless the host is trusted: a mirror chosen by the operator is. */
function trustedHostArgs(indexUrl: string): string[] {
  const url = new URL(indexUrl);
  return url.protocol === 'http:' ? ['--trusted-host', url.hostname] : [];
}

/**
 * A virtual environment in `<dir>/venv` holding one pinned PyPI package, made with uv when it is on
 * PATH, else with `python3 -m venv` and pip, against PYPI_INDEX_URL. The package's console script
 * is what runs.
 */
export async function installPypi(plan: PackagePlan, opts: InstallerOptions): Promise<InstalledPackage> {
  const { venv, python, distInfo } = await pipInstallFiles(plan, opts);
  const metadata = readFileSync(path.join(distInfo, 'METADATA'), 'utf8');
  const version = /^Version:\s*(\S+)/m.exec(metadata)?.[1] ?? plan.version;
  const entryPoints = path.join(distInfo, 'entry_points.txt');
  const scripts = consoleScripts(existsSync(entryPoints) ? readFileSync(entryPoints, 'utf8') : '');
  const script = pickScript(scripts, plan.identifier, plan.entry);
  const command = path.join(venv, BIN, script);
  if (!isExecutableFile(command))
    throw new InstallError('install.script_missing', { name: script, package: plan.identifier, path: command });
  // The script's first line names the venv's Python by its absolute path, which a DATA_DIR mounted
  // elsewhere does not have: the venv's Python runs it instead (the venv is found from where that
  // Python is, so the pair works at any path).
  const direct = process.platform === 'win32';
  return {
    command: direct ? command : python,
    args: direct ? plan.args : [command, ...plan.args],
    version,
    manifest: { kind: 'pypi', identifier: plan.identifier, version, entry: script, args: plan.args },
  };
}

/** A venv in `<dir>/venv` with the pinned package installed; its Python and the package's `.dist-info`. */
export async function pipInstallFiles(
  plan: Pick<PackagePlan, 'identifier' | 'version'>,
  opts: InstallerOptions,
): Promise<{ venv: string; python: string; distInfo: string }> {
  mkdirSync(opts.dir, { recursive: true });
  const venv = path.join(opts.dir, 'venv');
  const python = path.join(venv, BIN, process.platform === 'win32' ? 'python.exe' : 'python');
  const spec = plan.version ? `${plan.identifier}==${plan.version}` : plan.identifier;
  let notFound = false;
  const run = async (command: string, args: string[]) => {
    opts.log(`$ ${command} ${args.join(' ')}`);
    try {
      await runCommand(command, args, {
        cwd: opts.dir,
        env: installEnv(),
        timeoutMs: opts.timeoutMs,
        onLine: (line) => {
          notFound ||= saysNotFound(line);
          opts.log(line);
        },
        signal: opts.signal,
      });
    } catch (err) {
      if (notFound && err instanceof CommandFailedError) throw new PackageNotFoundError('pypi', plan.identifier, plan.version);
      throw err;
    }
  };
  const uv = findExecutable('uv');
  if (uv) {
    await run(uv, ['venv', venv]);
    await run(uv, ['pip', 'install', '--python', python, '--index-url', opts.registry, spec]);
  } else {
    const system = findExecutable('python3') || findExecutable('python');
    if (!system) throw new InstallError('install.no_python');
    await run(system, ['-m', 'venv', venv]);
    await run(python, ['-m', 'pip', 'install', '--index-url', opts.registry, ...trustedHostArgs(opts.registry), spec]);
  }

  return { venv, python, distInfo: distInfoOf(venv, plan.identifier) };
}
