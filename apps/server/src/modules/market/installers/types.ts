import { LocalisedError } from '../../../i18n/localised-error.js';
import type { LineSink } from './run-command.js';

/** What an install puts on disk and runs: a package of npm or PyPI, pinned to one version. */
export interface PackagePlan {
  kind: 'npm' | 'pypi';
  /** The package name on its registry. */
  identifier: string;
  /** The version to pin; '' means the newest release. */
  version: string;
  /** The executable to run when the package has several (npm bin name, PyPI console script); '' picks one. */
  entry: string;
  /** Arguments after the executable. */
  args: string[];
}

/** A remote MCP server: nothing is installed, the gateway connects to it. */
export interface RemotePlan {
  kind: 'remote';
  transport: 'sse' | 'streamableHttp';
  url: string;
  /** Header names to the variable (or literal default) that fills them. */
  headers: Record<string, string>;
  /** The `{name}` placeholders of `url`, each filled from the variable of that name. */
  variables: string[];
}

/** A registry entry the gateway cannot run (a container image, a .NET tool …). */
export interface UnsupportedPlan {
  kind: 'unsupported';
  reason: string;
}

export type InstallPlan = PackagePlan | RemotePlan | UnsupportedPlan;

/** How an installed package is started, and what was installed (kept in the install directory). */
export interface InstalledPackage {
  command: string;
  args: string[];
  /** The version actually installed. */
  version: string;
  manifest: PackageManifest;
}

/**
 * `toolport-package.json` in the install directory: the package as a portable `npx`/`uvx` entry can
 * name it again (export), whatever the process is started with here.
 */
export interface PackageManifest {
  kind: 'npm' | 'pypi';
  identifier: string;
  version: string;
  entry: string;
  args: string[];
}

export const MANIFEST_FILE = 'toolport-package.json';

export interface InstallerOptions {
  dir: string;
  /** npm registry URL or PyPI simple index URL. */
  registry: string;
  timeoutMs: number;
  log: LineSink;
  signal?: AbortSignal;
}

/**
 * Why an install failed, in words of ours (a message key, said in each reader's language) with the install
 * tool's own output, when any, as untranslated detail. Its `message` is the English text, for logs.
 */
export class InstallError extends LocalisedError {}

/**
 * The registry does not know the package (npm's E404, pip's "No matching distribution", uv's "not found
 * in the package registry"): the cause a user can act on, said in their words (issue 15).
 */
export class PackageNotFoundError extends InstallError {
  constructor(
    readonly kind: 'npm' | 'pypi',
    readonly identifier: string,
    readonly version: string,
  ) {
    super('market.install_package_not_found', { name: `${identifier}${version ? `@${version}` : ''}` });
  }
}

/** npm, pip and uv's own words for "no such package" (or no such version of it). */
const NOT_FOUND_LINES = [/\bE404\b/, /\b404 Not Found\b/, /No matching distribution found/i, /not found in the package registry/i];
export const saysNotFound = (line: string) => NOT_FOUND_LINES.some((re) => re.test(line));
