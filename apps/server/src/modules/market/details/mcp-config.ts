import type { EnvVarDeclaration, McpServerEntry, McpServersDocument } from '@toolport/contract';
import type { LaunchPlan, SourcePackage } from '../sources/types.js';

/**
 * A service name for a package: its last path segment (`@scope/server-github` → `server-github`,
 * `io.github.acme/weather` → `weather`), lower-cased, in the alphabet service names allow.
 */
export function serviceNameFor(packageName: string): string {
  const last = packageName.split('/').pop() ?? packageName;
  const slug = last
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
  return slug.slice(0, 64) || 'mcp-server';
}

/**
 * The `mcpServers` entry that runs the package the way its source intends, in the portable
 * form any MCP client accepts (`npx`, `uvx`, `docker`, or a URL). The gateway itself installs
 * npm and PyPI packages once and starts them directly, with the same variables.
 */
export function mcpConfigFor(pkg: SourcePackage, envVars: EnvVarDeclaration[]): McpServersDocument {
  const entry = pkg.launch ? entryFor(pkg.launch, envVars) : null;
  return { mcpServers: entry ? { [serviceNameFor(pkg.name)]: entry } : {} };
}

function entryFor(launch: LaunchPlan, envVars: EnvVarDeclaration[]): McpServerEntry {
  if (launch.kind === 'remote') {
    const headers = Object.fromEntries(launch.headers.map((h) => [h.name, h.defaultValue]));
    return { type: launch.transport, url: launch.url, ...(launch.headers.length ? { headers } : {}) };
  }
  const { command, args } = commandFor(launch);
  const env = Object.fromEntries(envVars.map((v) => [v.name, v.default_value]));
  return { command, args, ...(envVars.length ? { env } : {}) };
}

const DEFAULT_RUNTIME: Record<string, string> = { npm: 'npx', pypi: 'uvx', oci: 'docker', nuget: 'dnx' };

function commandFor(launch: Extract<LaunchPlan, { kind: 'package' }>): { command: string; args: string[] } {
  const command = launch.runtimeHint || DEFAULT_RUNTIME[launch.registryType] || launch.identifier;
  const pinned = launch.version && launch.registryType !== 'oci' ? `${launch.identifier}@${launch.version}` : launch.identifier;
  const { runtimeArguments: before, packageArguments: after } = launch;
  switch (command) {
    case 'npx':
      return { command, args: [...(before.some((a) => a === '-y' || a === '--yes') ? [] : ['-y']), ...before, pinned, ...after] };
    case 'docker':
      return { command, args: before[0] === 'run' ? [...before, pinned, ...after] : ['run', '-i', '--rm', ...before, pinned, ...after] };
    case 'dnx':
      return { command, args: [...before, pinned, '--yes', ...after] };
    case launch.identifier:
      return { command, args: after };
    default:
      return { command, args: [...before, pinned, ...after] };
  }
}
