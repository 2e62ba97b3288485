import type { EnvVarDeclaration } from '@toolport/contract';
import { isPinnableVersion } from '../installers/runner-args.js';
import type { InstallPlan } from '../installers/types.js';
import type { LaunchPlan } from '../sources/types.js';

/**
 * From what a registry says about running a package to what the gateway installs: npm and PyPI
 * packages are installed and run directly, remote entries become remote services, other package
 * types (container images, .NET tools …) are refused with the reason.
 */
export function planForLaunch(launch: LaunchPlan | null, name: string): InstallPlan {
  if (!launch) return { kind: 'unsupported', reason: `the registry names no way to run ${name}` };
  if (launch.kind === 'remote') {
    // Each declared header is filled from the variable of the same name (or its fixed value).
    const headers = Object.fromEntries(launch.headers.map((h) => [h.name, h.name]));
    return { kind: 'remote', transport: launch.transport, url: launch.url, headers, variables: launch.variables.map((v) => v.name) };
  }
  const { registryType, identifier, version, packageArguments } = launch;
  if (registryType === 'npm' || registryType === 'pypi') {
    return { kind: registryType, identifier, version: isPinnableVersion(version) ? version : '', entry: '', args: packageArguments };
  }
  return {
    kind: 'unsupported',
    reason: `${registryType} packages (${identifier}) are not supported: the gateway installs npm and PyPI packages and connects to remote servers`,
  };
}

/**
 * A remote's URL with each `{name}` placeholder of `names` replaced by its value, URI-encoded (so a value
 * cannot add a path, a query or another host); the braces never reach the upstream. Undefined when a
 * placeholder has no value.
 */
export function filledUrl(url: string, names: readonly string[], values: Record<string, string>): string | undefined {
  let missing = false;
  const filled = url.replace(/\{([^{}/?#]+)\}/g, (whole, name: string) => {
    if (!names.includes(name)) return whole;
    const value = values[name]?.trim();
    if (!value) {
      missing = true;
      return whole;
    }
    return encodeURIComponent(value);
  });
  return missing ? undefined : filled;
}

/** Values the console treats as "not filled in yet" (docs/console.md §5). */
const PLACEHOLDER = /your-|enter-|api-key-here|api-token-here|token-here|key-here|secret-here|paste-|insert-|add-/i;

export const isMissingValue = (value: string | undefined): boolean => !value?.trim() || PLACEHOLDER.test(value);

/** Required variables that have neither a provided value nor a usable default. */
export function missingVariables(vars: EnvVarDeclaration[], provided: Record<string, string>): string[] {
  return vars.filter((v) => !v.optional && isMissingValue(provided[v.name]) && isMissingValue(v.default_value)).map((v) => v.name);
}

/**
 * The values a new service starts with: every provided value that is not blank, then the declared
 * defaults of the variables left unset (placeholders such as `<your-token>` are not defaults).
 */
export function initialValues(vars: EnvVarDeclaration[], provided: Record<string, string>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(provided)) if (value.trim()) values[name] = value;
  for (const v of vars) if (values[v.name] === undefined && !isMissingValue(v.default_value)) values[v.name] = v.default_value;
  return values;
}
