import type { InstalledService } from '@toolport/contract';

/** An installed service as GET /api/mcp_market/installed returns it; tests override what they look at. */
export function installedService(overrides: Partial<InstalledService> = {}): InstalledService {
  const id = overrides.id ?? 1;
  return {
    id,
    installed_service_id: id,
    name: `service-${id}`,
    display_name: `Service ${id}`,
    description: `Description of service ${id}`,
    version: '1.0.0',
    source: 'custom',
    package_name: '',
    package_manager: '',
    type: 'streamableHttp',
    command: 'https://upstream.test/mcp',
    args_json: '[]',
    typed_command: '',
    default_envs_json: '{}',
    headers_json: '{}',
    env_vars: [],
    enabled: true,
    globally_enabled: overrides.enabled ?? true,
    switched_off_by_me: false,
    switched_off_by: [],
    isolation: 'shared',
    health_status: 'healthy',
    health_details: '',
    last_health_check: null,
    tool_count: 3,
    tools_disabled: 0,
    rpd_limit: 0,
    user_daily_request_count: 0,
    remaining_requests: -1,
    my_env_names: [],
    oauth_status: 'none',
    oauth_mode: null,
    created_at: 0,
    updated_at: 0,
    ...overrides,
  };
}
