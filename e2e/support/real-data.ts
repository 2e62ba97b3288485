import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIRequestContext } from '@playwright/test';
import { echoPackage } from '../../apps/server/test/fake-registries';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../apps/server/test/fixtures/oauth-mcp-server';
import { type Credentials, createUser } from './console-users';
import { expect, test as marketTest } from './market-server';
import { accessToken, everythingCommand, type InstalledRow, installedServices, setDailyLimit } from './services-api';

/**
 * The console with real data (issue 29, "Deliver"): one server of its own per worker (support/market-server.ts,
 * its registries the local fakes) holding what a team's console really shows, set up once through the real API
 * and shared by every test of the worker:
 *
 * - a package with a long scoped name installed from the Market (npm install from the fake registry);
 * - the real @modelcontextprotocol/server-memory under its package name, as its Market install names it;
 * - the real server-everything under a long Chinese name (its tools, one switched off);
 * - a remote behind OAuth that needs authorization (a real OAuth-protected MCP server on loopback);
 * - a stdio server that crashes at start, printing a stack trace and exiting with code 1;
 * - a group with a long Chinese name over the first three;
 * - a role-1 user under daily limits, who has made calls (usage, logs and analytics are not empty).
 *
 * Specs take `realData` (`import { test, expect } from '../support/real-data'`) and sign in on
 * `realData.url`'s server with the suite's fixtures (`signedIn`, `signIn`): `baseURL` is this server.
 */

/** Longer than `@modelcontextprotocol/server-memory`, as real scoped names are. */
export const LONG_SCOPED_PACKAGE = '@acme-enterprise-knowledge/mcp-server-document-retrieval-and-archive-management';
export const MEMORY_DISPLAY = '@modelcontextprotocol/server-memory';
export const CHINESE_DISPLAY = '企业知识库检索与文档管理服务（测试环境，华东二区备用集群）';
export const OAUTH_DISPLAY = '企业网盘远程服务 (OAuth) — remote document store behind sign-in';
export const CRASH_DISPLAY = '@acme-enterprise-knowledge/crashing-document-indexer-stdio-server';
export const GROUP_NAME = 'knowledge-base-and-document-management-services-east-2';
export const GROUP_DISPLAY = '企业知识库与文档管理服务组（华东二区，所有成员服务与工具）';
/** The tool of server-everything switched off for everyone. */
export const DISABLED_TOOL = 'get-env';
/** The role-1 user's daily limit on each service that has one, and the calls already made today. */
export const DAILY_LIMIT = 5;
export const CALLS_MADE = 2;

/** The echo server of the fake registry under a scoped name longer than `@modelcontextprotocol/server-memory`. */
const extraPackage = echoPackage(LONG_SCOPED_PACKAGE, '1.4.0', {
  bin: 'acme-document-retrieval',
  description: "The echo server under a long scoped name, as real packages have: for the console's layout with real data",
});
const memoryEntry = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json')),
  'dist/index.js',
);
const crashingScript = fileURLToPath(new URL('./crashing-tool-server.mjs', import.meta.url));

export interface RealService {
  id: number;
  /** The endpoint's name: /proxy/{name}/mcp. */
  name: string;
  display: string;
}

export interface RealData {
  url: string;
  scoped: RealService;
  memory: RealService;
  chinese: RealService;
  oauth: RealService;
  crashing: RealService;
  group: { id: number; name: string; display: string };
  /** Role 1, daily limits on `chinese` and `memory`, CALLS_MADE calls on `chinese` today. */
  user: Credentials;
  upstream: OAuthMcpServer;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function ok<T>(res: Awaited<ReturnType<APIRequestContext['get']>>, what: string): Promise<T> {
  const text = await res.text();
  expect(res.ok(), `${what}: ${res.status()} ${text.slice(0, 500)}`).toBe(true);
  return (JSON.parse(text) as { data: T }).data;
}

async function waitForTask(request: APIRequestContext, token: string, taskId: string): Promise<string> {
  let status = '';
  await expect
    .poll(
      async () => {
        const res = await request.get(`/api/mcp_market/install_status/${taskId}`, { headers: bearer(token) });
        status = (await ok<{ status: string }>(res, 'install status')).status;
        return status === 'completed' || status === 'failed';
      },
      { timeout: 120_000, intervals: [250, 500, 1_000] },
    )
    .toBe(true);
  return status;
}

async function byId(request: APIRequestContext, token: string, id: number): Promise<InstalledRow> {
  const row = (await installedServices(request, token)).find((s) => s.id === id);
  if (!row) throw new Error(`service ${id} is not in the installed list`);
  return row;
}

/** A custom service through POST /mcp_market/custom_service; stdio ones are waited for until their first check ends. */
async function custom(
  request: APIRequestContext,
  token: string,
  data: Record<string, unknown>,
  expected: 'completed' | 'failed',
): Promise<RealService> {
  const made = await ok<{ service_id: number; name: string; display_name: string; task_id?: string }>(
    await request.post('/api/mcp_market/custom_service', { headers: bearer(token), data }),
    `create ${String(data.name)}`,
  );
  if (made.task_id) expect(await waitForTask(request, token, made.task_id), `install of ${String(data.name)}`).toBe(expected);
  return { id: made.service_id, name: made.name, display: made.display_name };
}

async function rename(request: APIRequestContext, token: string, service: RealService, display: string): Promise<RealService> {
  await ok(await request.put(`/api/mcp_services/${service.id}`, { headers: bearer(token), data: { display_name: display } }), 'rename');
  return { ...service, display };
}

async function setUp(request: APIRequestContext, url: string, upstream: OAuthMcpServer): Promise<RealData> {
  const token = await accessToken(request);

  // The Market install, as the console's Install button sends it: npm installs the package from the fake registry.
  const installed = await ok<{ mcp_service_id: number; task_id: string; service_name: string }>(
    await request.post('/api/mcp_market/install_or_add_service', {
      headers: bearer(token),
      data: { package_name: LONG_SCOPED_PACKAGE, package_manager: 'npm' },
    }),
    'market install',
  );
  expect(await waitForTask(request, token, installed.task_id), 'market install').toBe('completed');
  const scopedRow = await byId(request, token, installed.mcp_service_id);
  const scoped = { id: scopedRow.id, name: scopedRow.name, display: scopedRow.display_name };
  expect(scoped.display).toBe(LONG_SCOPED_PACKAGE);

  const memory = await rename(
    request,
    token,
    await custom(request, token, { name: 'server-memory', type: 'stdio', command: `${process.execPath} ${memoryEntry}` }, 'completed'),
    MEMORY_DISPLAY,
  );

  // An all-Chinese name is the display name; the endpoint's name is derived (custom_service's endpoint_name_derived).
  const chinese = await custom(request, token, { name: CHINESE_DISPLAY, type: 'stdio', command: everythingCommand() }, 'completed');
  expect(chinese.display).toBe(CHINESE_DISPLAY);
  await ok(
    await request.put(`/api/mcp_services/${chinese.id}/tools/${DISABLED_TOOL}`, { headers: bearer(token), data: { enabled: false } }),
    'switch a tool off',
  );

  const oauth = await rename(
    request,
    token,
    await custom(request, token, { name: 'knowledge-drive-oauth', type: 'streamableHttp', url: upstream.mcpUrl }, 'completed'),
    OAUTH_DISPLAY,
  );
  // A check meets the 401 and discovers the provider: the service now needs authorization.
  await request.post(`/api/mcp_services/${oauth.id}/health/check`, { headers: bearer(token) });
  await expect
    .poll(
      async () =>
        (await ok<{ oauth_status: string }>(await request.get(`/api/mcp_services/${oauth.id}/oauth`, { headers: bearer(token) }), 'oauth'))
          .oauth_status,
      { timeout: 20_000 },
    )
    .toBe('needs_authorization');

  const crashing = await rename(
    request,
    token,
    await custom(request, token, { name: 'crashing-indexer', type: 'stdio', command: `${process.execPath} ${crashingScript}` }, 'failed'),
    CRASH_DISPLAY,
  );

  const group = await ok<{ id: number; name: string; display_name: string }>(
    await request.post('/api/groups', {
      headers: bearer(token),
      data: {
        name: GROUP_NAME,
        display_name: GROUP_DISPLAY,
        description: '检索、归档与管理企业文档的全部工具。All the tools to search, archive and manage the company’s documents.',
        members: [{ service_id: scoped.id }, { service_id: memory.id }, { service_id: chinese.id }],
      },
    }),
    'create the group',
  );

  const user = await createUser(request, 'limited');
  for (const service of [chinese, memory]) await setDailyLimit(request, token, service.id, DAILY_LIMIT);
  const userToken = await accessToken(request, user.username, user.password);
  for (let i = 0; i < CALLS_MADE; i += 1) {
    const called = await ok<{ is_error: boolean }>(
      await request.post(`/api/mcp_services/${chinese.id}/tools/echo/call`, {
        headers: bearer(userToken),
        data: { arguments: { message: `你好 ${i + 1}` } },
      }),
      'a call as the user',
    );
    expect(called.is_error).toBe(false);
  }

  return {
    url,
    scoped,
    memory,
    chinese,
    oauth,
    crashing,
    group: { id: group.id, name: group.name, display: GROUP_DISPLAY },
    user,
    upstream,
  };
}

export const test = marketTest.extend<object, { realData: RealData }>({
  fakeRegistryOptions: [{ extraNpmPackages: [extraPackage] }, { scope: 'worker' }],
  realData: [
    async ({ marketServer, playwright }, use) => {
      const upstream = await startOAuthMcpServer();
      const request = await playwright.request.newContext({ baseURL: marketServer.url });
      try {
        const data = await setUp(request, marketServer.url, upstream);
        await request.dispose();
        await use(data);
      } finally {
        await upstream.close();
      }
    },
    { scope: 'worker', timeout: 240_000 },
  ],
});

export { expect } from './market-server';
