import type { NewService } from '../../src/db/schema.js';

// Kept apart from the vitest kits (no vitest import): the benchmarks seed services with it too (bench/bench-app.ts
// through gateway/gateway-harness.ts).

/** A services row for suites that insert directly: every column with its migration default. */
export function serviceRow(values: Partial<NewService> & Pick<NewService, 'name'>): NewService {
  const now = Date.now();
  return {
    display_name: '',
    description: '',
    type: 'stdio',
    source: 'custom',
    package_name: '',
    package_manager: '',
    version: '',
    command: '',
    args_json: '[]',
    env_enc: '',
    headers_enc: '',
    env_schema_json: '[]',
    install_dir: '',
    enabled: 1,
    isolation: 'shared',
    rpd_limit: 0,
    health_status: 'unknown',
    health_details: '',
    last_health_check: null,
    tool_count: 0,
    created_at: now,
    updated_at: now,
    ...values,
  };
}
