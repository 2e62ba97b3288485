/**
 * The environment of install commands (npm, pip, uv). Install scripts of a package run with it, so
 * like a tool server's own environment it is a short list copied from the gateway's, never the
 * whole: SECRET_KEY, DATABASE_URL and the rest must not reach a package's postinstall. Settings
 * operators use to reach a mirror (proxies, certificates, npm's user config with registry
 * credentials, pip's trusted hosts, caches) are copied.
 */
const INHERITED = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'TZ',
  'TMPDIR',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'npm_config_cache',
  'npm_config_userconfig',
  'NPM_CONFIG_USERCONFIG',
  'npm_config_proxy',
  'npm_config_https_proxy',
  'npm_config_noproxy',
  'npm_config_cafile',
  'npm_config_strict_ssl',
  'PIP_CACHE_DIR',
  'PIP_CERT',
  'PIP_TRUSTED_HOST',
  'PIP_EXTRA_INDEX_URL',
  'UV_CACHE_DIR',
  'UV_NATIVE_TLS',
  'UV_PYTHON',
] as const;

export function installEnv(parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = parent[name];
    if (value) env[name] = value;
  }
  // Native addons compile against the system's Node headers: node-gyp must not download them.
  env.npm_config_nodedir = parent.npm_config_nodedir || '/usr';
  env.npm_config_update_notifier = 'false';
  env.PIP_DISABLE_PIP_VERSION_CHECK = '1';
  env.PIP_NO_INPUT = '1';
  return env;
}
