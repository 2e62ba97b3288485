import type { CustomServiceRequest, ServiceType } from '@toolport/contract';
import type { OpenApiPlan } from '../../gateway/openapi/plan.js';
import { AppError, badRequest, inField } from '../../http/errors.js';
import type { MessageKey } from '../../i18n/index.js';
import type { RemoteAddresses } from '../../infra/outbound.js';
import {
  CommandLineError,
  executableBaseName,
  packageBaseName,
  parseKeyValues,
  parseStdioCommand,
  SERVICE_NAME,
  slugFrom,
} from './command-line.js';

/** A custom service checked and normalised, ready to be stored (values not yet encrypted). */
export interface CustomDraft {
  /** The URL-safe name asked for, or undefined when one must be derived from `nameSeed`. */
  name: string | undefined;
  nameSeed: string;
  displayName: string;
  description: string;
  type: ServiceType;
  command: string;
  args: string[];
  packageName: string;
  /** The version the command line pins, shown on the card; '' when none. */
  packageVersion: string;
  packageManager: string;
  env: Record<string, string>;
  headers: Record<string, string>;
  /** One process for every client session, or one per session. */
  isolation: 'shared' | 'session';
  /** openapi: the compiled document (filled in by compileOpenApi, openapi.ts). */
  openapi?: OpenApiPlan;
}

const commandErrors: Record<CommandLineError['reason'], MessageKey> = {
  empty: 'service.command_required',
  unterminated_quote: 'service.command_unterminated_quote',
  no_package: 'service.command_parse_failed',
  not_allowed: 'service.command_not_allowed',
  shell_flag: 'service.command_shell_flag',
  not_executable: 'service.command_not_executable',
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Variable lines: names a process environment accepts. */
export function checkedEnv(input: unknown): Record<string, string> {
  const env = parseKeyValues(input);
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name) || name.length > 128) throw badRequest('service.env_name_invalid', { name: name.slice(0, 64) });
    if (value.includes('\u0000')) throw badRequest('service.env_value_invalid', { name });
  }
  return env;
}

/** Header lines: valid HTTP field names, values without line breaks (no header injection). */
export function checkedHeaders(input: unknown): Record<string, string> {
  const headers = parseKeyValues(input);
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name) || name.length > 128 || CONTROL.test(value))
      throw badRequest('service.header_invalid', { name: name.slice(0, 64) });
  }
  return headers;
}

/** An http(s) URL, or the localised 'URL cannot be empty' / 'Please enter a valid URL'. */
export function checkedUrl(raw: string): URL {
  const text = raw.trim();
  if (!text) throw badRequest('service.url_required');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badRequest('service.url_invalid');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw badRequest('service.url_invalid');
  return url;
}

/** A remote service URL the address preference allows (infra/outbound.ts `remoteAddresses`), else 400 saying why. */
export async function checkedRemoteAddress(url: string, remote: Pick<RemoteAddresses, 'check'>): Promise<void> {
  const refused = await remote.check(new URL(url));
  if (refused) throw badRequest(refused.key, refused.params, 'address_refused');
}

export function checkedDisplayName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badRequest('service.display_name_required');
  if (name.length > 128 || CONTROL.test(name)) throw badRequest('service.name_invalid');
  return name;
}

function stdioPart(commandLine: string) {
  if (!commandLine.trim()) throw badRequest('service.command_required');
  try {
    return parseStdioCommand(commandLine);
  } catch (err) {
    if (err instanceof CommandLineError) {
      const path = commandLine.trim().split(/\s+/)[0] ?? '';
      throw badRequest(commandErrors[err.reason], { path: path.slice(0, 200) });
    }
    throw err;
  }
}

/**
 * Checks a custom install request (docs/console.md §5). A name that is already URL-safe is used as is;
 * anything else is taken as the display name and a URL-safe name is derived from the package,
 * the executable or the URL host.
 */
export function draftCustomService(req: CustomServiceRequest): CustomDraft {
  const given = req.name.trim();
  if (!given) throw new AppError(400, 'service.name_required', undefined, { field: 'name' });
  const displayName = inField('name', () => checkedDisplayName(given));
  const common = {
    displayName,
    description: req.description.trim(),
    type: req.type,
    name: SERVICE_NAME.test(given) ? given : undefined,
    isolation: req.isolation ?? 'shared',
  };

  if (req.type === 'stdio') {
    const cmd = inField('command', () => stdioPart(req.command));
    const seed = cmd.packageName ? packageBaseName(cmd.packageName) : executableBaseName(cmd.command);
    return {
      ...common,
      nameSeed: slugFrom(seed),
      command: cmd.command,
      args: cmd.args,
      packageName: cmd.packageName,
      packageVersion: cmd.packageVersion,
      packageManager: cmd.packageManager,
      env: inField('environments', () => checkedEnv(req.environments)),
      headers: {},
    };
  }
  if (req.type === 'openapi') {
    // The document is fetched and compiled afterwards (openapi.ts); its address is checked there.
    return {
      ...common,
      nameSeed: 'openapi',
      command: '',
      args: [],
      packageName: '',
      packageVersion: '',
      packageManager: '',
      env: checkedEnv(req.environments),
      headers: checkedHeaders(req.headers),
    };
  }
  // The console sends the address in `url`; an older form put it in `command`.
  const url = inField(req.url ? 'url' : 'command', () => checkedUrl(req.url || req.command));
  return {
    ...common,
    nameSeed: slugFrom(url.port ? `${url.hostname}-${url.port}` : url.hostname),
    command: url.toString(),
    args: [],
    packageName: '',
    packageVersion: '',
    packageManager: '',
    env: {},
    headers: inField('headers', () => checkedHeaders(req.headers)),
  };
}
