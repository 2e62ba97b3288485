import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { FullConfig } from '@playwright/test';
import { ADMIN_PASSWORD, SERVER_URL_ENV } from './constants';
import { repoRoot, startServer } from './server';

/**
 * Builds what is stale, starts one real server for the whole run and hands its URL to the workers
 * through the environment. The returned function is the global teardown.
 */
export default async function globalSetup(config: FullConfig): Promise<() => Promise<void>> {
  const chromium = config.projects[0]?.use.launchOptions?.executablePath;
  if (chromium && !existsSync(chromium)) {
    throw new Error(`${chromium} is missing: install it with \`apt-get install -y chromium fonts-noto-cjk\``);
  }
  const build = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/build-if-stale.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('building the console or the server failed');

  // mcp-client-oauth.spec.ts serves Client ID Metadata Documents on loopback, which the operator must allow
  // explicitly (docs/decisions/0041-oauth-server-hostile-input.md).
  const server = await startServer(ADMIN_PASSWORD, { ALLOW_PRIVATE_NETWORK_CLIENT_FETCHES: 'true' });
  process.env[SERVER_URL_ENV] = server.url;
  return () => server.stop();
}
