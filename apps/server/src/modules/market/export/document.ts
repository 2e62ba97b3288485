import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type McpServerEntry, type McpServersDocument, splitCommandLine } from '@toolport/contract';
import type { ServiceRow } from '../../../db/schema.js';
import type { OpenApiPlan } from '../../../gateway/openapi/plan.js';
import { maskUrlCredentials, maskValues } from '../../../infra/credentials.js';
import { resolveInstallDir } from '../../../infra/install-dir.js';
import type { Secrets } from '../../../infra/secrets.js';
import { pinTypedCommand } from '../installers/runner-args.js';
import { MANIFEST_FILE, type PackageManifest } from '../installers/types.js';

const parseArgs = (json: string): string[] => {
  try {
    const parsed: unknown = JSON.parse(json || '[]');
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
};

/** The manifest an install wrote next to the package, when the service was installed into DATA_DIR/packages. */
function manifestOf(row: ServiceRow, dataDir: string): PackageManifest | undefined {
  const packages = path.resolve(dataDir, 'packages');
  const dir = resolveInstallDir(dataDir, row.install_dir);
  if (!dir || !path.resolve(dir).startsWith(`${packages}${path.sep}`)) return undefined;
  const file = path.join(dir, MANIFEST_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const m = JSON.parse(readFileSync(file, 'utf8')) as Partial<PackageManifest>;
    if ((m.kind !== 'npm' && m.kind !== 'pypi') || typeof m.identifier !== 'string') return undefined;
    return {
      kind: m.kind,
      identifier: m.identifier,
      version: m.version ?? '',
      entry: m.entry ?? '',
      args: Array.isArray(m.args) ? m.args.map(String) : [],
    };
  } catch {
    return undefined;
  }
}

/**
 * An installed package in the portable form every MCP client (and Toolport's own import) reads:
 * `npx -y pkg@version …` or `uvx pkg@version …`, pinned to the installed version.
 */
export function portableCommand(m: PackageManifest): { command: string; args: string[] } {
  if (m.kind === 'npm') {
    const spec = m.version ? `${m.identifier}@${m.version}` : m.identifier;
    return { command: 'npx', args: ['-y', ...(m.entry ? ['-p', spec, m.entry] : [spec]), ...m.args] };
  }
  if (m.entry && m.entry !== m.identifier) {
    return { command: 'uvx', args: ['--from', m.version ? `${m.identifier}==${m.version}` : m.identifier, m.entry, ...m.args] };
  }
  return { command: 'uvx', args: [m.version ? `${m.identifier}@${m.version}` : m.identifier, ...m.args] };
}

/**
 * The installed services as an `mcpServers` document (only admins may export): importing it on a fresh
 * instance recreates them. Variable and header values, and the credentials in remote URLs (infra/credentials.ts),
 * are masked unless `includeSecrets` is set, so a document shown or shared by mistake leaks no key. Users' personal values are never part of it.
 * Remotes are typed `http` / `sse`: Claude Code and VS Code do not read `streamableHttp`, and the
 * importer reads all three. A service with a process per client session says so in `isolation`.
 */
export function exportServices(
  rows: ServiceRow[],
  secrets: Secrets,
  dataDir: string,
  { includeSecrets = false }: { includeSecrets?: boolean } = {},
): McpServersDocument {
  const reveal = (values: Record<string, string>) => (includeSecrets ? values : maskValues(values));
  const mcpServers: Record<string, McpServerEntry> = {};
  for (const row of rows) {
    // Written only when it differs from the default, so the document stays what other clients expect.
    const isolation = row.isolation === 'session' ? { isolation: 'session' as const } : {};
    if (row.type === 'openapi') {
      mcpServers[row.name] = openApiEntry(row, secrets, reveal, includeSecrets);
      continue;
    }
    if (row.type !== 'stdio') {
      const headers = reveal(secrets.decryptJson<Record<string, string>>(row.headers_enc, {}));
      const type = row.type === 'sse' ? 'sse' : 'http';
      const url = includeSecrets ? row.command : maskUrlCredentials(row.command);
      mcpServers[row.name] = { type, url, ...(Object.keys(headers).length ? { headers } : {}), ...isolation };
      continue;
    }
    const env = reveal(secrets.decryptJson<Record<string, string>>(row.env_enc, {}));
    const manifest = manifestOf(row, dataDir);
    // A pinned `npx`/`uvx` service is exported as the admin typed it, at the version installed (decision 0035).
    const typed = (row.typed_command && splitCommandLine(row.typed_command)) || [];
    const [typedCommand, ...typedArgs] = (row.version && pinTypedCommand(typed, row.version)) || typed;
    const run = typedCommand
      ? { command: typedCommand, args: typedArgs }
      : manifest
        ? portableCommand(manifest)
        : { command: row.command, args: parseArgs(row.args_json) };
    mcpServers[row.name] = { ...run, ...(Object.keys(env).length ? { env } : {}), ...isolation };
  }
  return { mcpServers };
}

/**
 * An OpenAPI service (docs/openapi.md): Toolport's own `openapi` type, which other clients skip or refuse:
 * the document's URL (credentials masked) or the uploaded document, the base URL, the operation filter,
 * and the headers and variables, masked as a remote's headers are.
 */
function openApiEntry(
  row: ServiceRow,
  secrets: Secrets,
  reveal: (values: Record<string, string>) => Record<string, string>,
  includeSecrets: boolean,
): McpServerEntry {
  let plan: Partial<OpenApiPlan> = {};
  try {
    plan = JSON.parse(row.openapi_json || '{}') as Partial<OpenApiPlan>;
  } catch {
    plan = {};
  }
  const headers = reveal(secrets.decryptJson<Record<string, string>>(row.headers_enc, {}));
  const env = reveal(secrets.decryptJson<Record<string, string>>(row.env_enc, {}));
  const filter = plan.filter ?? {};
  const filtered = Boolean(filter.tags?.length || filter.paths?.length || filter.operation_ids?.length);
  return {
    type: 'openapi',
    ...(row.command ? { url: includeSecrets ? row.command : maskUrlCredentials(row.command) } : { document: plan.document ?? '' }),
    ...(plan.baseUrl ? { base_url: plan.baseUrl } : {}),
    ...(filtered ? { operation_filter: filter } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(Object.keys(env).length ? { env } : {}),
    ...(row.isolation === 'session' ? { isolation: 'session' as const } : {}),
  };
}
