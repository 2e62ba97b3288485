import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export const PUBLIC_NPM_REGISTRY = 'https://registry.npmjs.org/';

const run = promisify(execFile);

/** `npm config get registry`: the registry (often a mirror) this machine's npm already uses. */
async function readNpmConfig(): Promise<string> {
  const { stdout } = await run('npm', ['config', 'get', 'registry'], { timeout: 15_000, windowsHide: true });
  return stdout.trim();
}

/**
 * The npm registry the marketplace searches and the installer installs from: NPM_REGISTRY_URL
 * when set, else what npm itself is configured with (read once: it spawns npm), else the public
 * registry. Users behind a mirror configure npm once and Toolport follows.
 */
export class NpmRegistryUrl {
  private resolved: Promise<string> | undefined;

  constructor(
    private readonly configured: string | undefined,
    private readonly read: () => Promise<string> = readNpmConfig,
  ) {}

  get(): Promise<string> {
    if (this.configured) return Promise.resolve(this.configured);
    this.resolved ??= this.read()
      .then((url) => (/^https?:\/\/\S+$/.test(url) ? url : PUBLIC_NPM_REGISTRY))
      .catch(() => PUBLIC_NPM_REGISTRY);
    return this.resolved;
  }
}
