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

const PLACEHOLDERS = /\{([^{}/?#]+)\}/g;

/** Where the placeholder at `index` of a URL template sits: the host name, the port, or elsewhere (user info, path, query). */
function urlPartAt(template: string, index: number): 'host' | 'port' | 'other' {
  const scheme = template.indexOf('://');
  if (scheme < 0) return 'other';
  const start = scheme + 3;
  const length = template.slice(start).search(/[/?#]/);
  const end = length < 0 ? template.length : start + length;
  if (index < start || index >= end) return 'other';
  const at = template.lastIndexOf('@', end - 1);
  const host = at >= start ? at + 1 : start;
  if (index < host) return 'other';
  const colon = template.indexOf(':', host);
  return colon >= 0 && colon < end && index > colon ? 'port' : 'host';
}

/** What a host name's part may hold (letters of any script, digits, dots, hyphens), and a port. */
const HOST_VALUE = /^[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*$/u;
const isPort = (value: string) => /^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= 65535;

/**
 * The first URL variable whose value cannot go where its placeholder sits: a host name takes letters, digits,
 * dots and hyphens (a `/`, `@`, `:` or space would make another address, or none), a port a number from 1 to
 * 65535. Undefined when every value fits (decision 0042).
 */
export function misplacedUrlVariable(
  url: string,
  names: readonly string[],
  values: Record<string, string>,
): { name: string; part: 'host' | 'port' } | undefined {
  for (const match of url.matchAll(PLACEHOLDERS)) {
    const name = match[1] as string;
    const value = values[name]?.trim();
    if (!names.includes(name) || !value) continue;
    const part = urlPartAt(url, match.index);
    if (part === 'host' && !HOST_VALUE.test(value)) return { name, part };
    if (part === 'port' && !isPort(value)) return { name, part };
  }
  return undefined;
}

/**
 * A remote's URL with each `{name}` placeholder of `names` replaced by its value, URI-encoded outside the host
 * and port (so a value cannot add a path, a query or another host; those two are checked by
 * misplacedUrlVariable instead); the braces never reach the upstream. Undefined when a placeholder has no value.
 */
export function filledUrl(url: string, names: readonly string[], values: Record<string, string>): string | undefined {
  let missing = false;
  const filled = url.replace(PLACEHOLDERS, (whole, name: string, index: number) => {
    if (!names.includes(name)) return whole;
    const value = values[name]?.trim();
    if (!value) {
      missing = true;
      return whole;
    }
    return urlPartAt(url, index) === 'other' ? encodeURIComponent(value) : value;
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
