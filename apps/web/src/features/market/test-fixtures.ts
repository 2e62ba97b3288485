import type { EnvVarDeclaration, InstallStatus, MarketPackage, PackageDetails } from '@toolport/contract';
import { fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

/** A search result as GET /api/mcp_market/search returns it; tests override what they look at. */
export function marketPackage(overrides: Partial<MarketPackage> = {}): MarketPackage {
  return {
    name: 'acme-echo-mcp',
    version: '1.0.0',
    description: 'Echo tools for MCP clients',
    package_manager: 'npm',
    downloads: 321,
    github_stars: 12,
    author: 'Acme Tools',
    homepage: 'https://github.com/acme/echo-mcp#readme',
    repository_url: 'https://github.com/acme/echo-mcp',
    last_publish: '2026-10-01T09:00:00.000Z',
    is_installed: false,
    installed_service_id: null,
    ...overrides,
  };
}

export const envVar = (overrides: Partial<EnvVarDeclaration> = {}): EnvVarDeclaration => ({
  name: 'ACME_ECHO_TOKEN',
  description: 'Token from the Acme console',
  is_secret: true,
  optional: false,
  default_value: '',
  ...overrides,
});

/** GET /api/mcp_market/package_details of the package above. */
export function packageDetails(pkg: Partial<MarketPackage> = {}, overrides: Partial<PackageDetails> = {}): PackageDetails {
  const details = marketPackage(pkg);
  return {
    details,
    downloads: details.downloads,
    stars: details.github_stars,
    author: details.author,
    repository_url: details.repository_url,
    last_publish: details.last_publish,
    is_installed: details.is_installed,
    installed_service_id: details.installed_service_id,
    env_vars: [],
    readme: '# acme-echo-mcp\n\nEcho tools.',
    mcp_config: { mcpServers: {} },
    ...overrides,
  };
}

/** GET /api/mcp_market/install_status/{taskId}. */
export function installStatus(overrides: Partial<InstallStatus> = {}): InstallStatus {
  return {
    task_id: 't1',
    kind: 'marketplace',
    service_id: 41,
    status: 'installing',
    logs: [],
    error_message: '',
    error: '',
    created_at: 0,
    finished_at: null,
    ...overrides,
  };
}

export const installStarted = (taskId = 't1', serviceId = 41) =>
  ok({ mcp_service_id: serviceId, task_id: taskId, status: 'pending', service_name: 'acme-echo-mcp' }, 'Installing acme-echo-mcp');

type Routes = Parameters<typeof fakeApi>[0];

/** The whole console at `path` as an administrator, with the marketplace calls answered by `routes`. */
export async function renderMarket(path: string, routes: Routes = {}) {
  const admin = { role: 10, username: 'root' };
  storeSession(admin);
  const api = fakeApi({
    // The console re-reads the caller's profile; it must still be an administrator.
    'GET /api/user/self': () => ok(selfUser(admin)),
    'GET /api/mcp_market/installed': () => ok([]),
    'GET /api/mcp_market/search': () => ok([marketPackage()]),
    ...routes,
  });
  const rendered = await renderApp(path);
  return { api, ...rendered };
}
