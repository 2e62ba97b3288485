/**
 * The environment a tool server process starts with (docs/architecture.md §3): a short list of harmless
 * variables copied from the gateway's own environment, then the service's variables, then the
 * user's personal values. Nothing else of the gateway's leaks through: SECRET_KEY, DATABASE_URL,
 * REDIS_URL, ADMIN_PASSWORD and any other variable are simply never copied.
 */
const INHERITED = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  // Package mirrors, so `npx …` / `uvx …` services work where the public registries are unreachable.
  'npm_config_registry',
  'NPM_CONFIG_REGISTRY',
  'PIP_INDEX_URL',
  'UV_INDEX_URL',
  'UV_DEFAULT_INDEX',
  // Outbound proxies: a tool server behind the same proxy as the gateway needs them to reach anything.
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
] as const;

export interface RegistryMirrors {
  /** NPM_REGISTRY_URL of the gateway, handed to npm as npm_config_registry. */
  npm?: string | undefined;
  /** PYPI_INDEX_URL of the gateway, handed to pip and uv. */
  pypiIndex?: string | undefined;
}

export function buildProcessEnv(
  parent: NodeJS.ProcessEnv,
  serviceEnv: Record<string, string>,
  userEnv: Record<string, string> | undefined,
  mirrors: RegistryMirrors = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = parent[name];
    if (value) env[name] = value;
  }
  if (mirrors.npm) env.npm_config_registry = mirrors.npm;
  if (mirrors.pypiIndex) {
    env.PIP_INDEX_URL = mirrors.pypiIndex;
    env.UV_INDEX_URL = mirrors.pypiIndex;
  }
  Object.assign(env, serviceEnv, userEnv ?? {});
  return env;
}
