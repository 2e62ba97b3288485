import path from 'node:path';
import type { APIRequestContext } from '@playwright/test';
import { expect } from '@playwright/test';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from './constants';
import { repoRoot } from './server';

/**
 * What the services specs set up and check through the real API, beside what they do in the browser.
 * Every call goes to the suite's server (the request context's baseURL).
 */

/**
 * The real server-everything as a stdio command an admin may enter: the absolute path of this Node and the
 * installed package's entry (hermetic, unlike `npx`, which would reach for the registry).
 */
export function everythingCommand(): string {
  const entry = path.join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  return `${process.execPath} ${entry} stdio`;
}

export async function accessToken(request: APIRequestContext, username = ADMIN_USERNAME, password = ADMIN_PASSWORD): Promise<string> {
  const res = await request.post('/api/auth/login', { data: { username, password } });
  const body = await res.json();
  expect(res.status(), `sign-in of ${username}: ${body.message ?? ''}`).toBe(200);
  return body.data.access_token as string;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function data<T>(res: Awaited<ReturnType<APIRequestContext['get']>>, what: string): Promise<T> {
  const body = (await res.json()) as { message?: string; data?: unknown };
  expect(res.ok(), `${what}: ${res.status()} ${body.message ?? ''}`).toBe(true);
  return body.data as T;
}

export interface InstalledRow {
  id: number;
  name: string;
  display_name: string;
  enabled: boolean;
  health_status: string;
  rpd_limit: number;
  user_daily_request_count: number;
  remaining_requests: number;
}

/** The installed list as a reader of `language` gets it: the gateway's own words in health reasons are localised. */
export async function installedServices(request: APIRequestContext, token: string, language = 'en'): Promise<InstalledRow[]> {
  const headers = { ...bearer(token), 'Accept-Language': language };
  return data(await request.get('/api/mcp_market/installed', { headers }), 'installed services');
}

export async function serviceNamed(
  request: APIRequestContext,
  token: string,
  name: string,
  language = 'en',
): Promise<InstalledRow | undefined> {
  return (await installedServices(request, token, language)).find((s) => s.name === name);
}

/** Creates a custom stdio service running server-everything and waits until its install task completed. */
export async function installEverything(request: APIRequestContext, token: string, name: string): Promise<InstalledRow> {
  const created = await data<{ service_id: number; task_id?: string }>(
    await request.post('/api/mcp_market/custom_service', {
      headers: bearer(token),
      data: { name, type: 'stdio', command: everythingCommand() },
    }),
    `create ${name}`,
  );
  if (created.task_id) {
    await expect
      .poll(
        async () =>
          (
            await data<{ status: string }>(
              await request.get(`/api/mcp_market/install_status/${created.task_id}`, { headers: bearer(token) }),
              'install status',
            )
          ).status,
        { timeout: 60_000, intervals: [250, 500, 1_000] },
      )
      .toBe('completed');
  }
  const row = await serviceNamed(request, token, name);
  if (!row) throw new Error(`${name} is not in the installed list`);
  return row;
}

/** Removes services a spec created, whether or not the spec got to uninstall them itself. */
export async function uninstallNamed(request: APIRequestContext, token: string, names: string[]): Promise<void> {
  for (const row of await installedServices(request, token)) {
    if (!names.includes(row.name)) continue;
    await request.post('/api/mcp_market/uninstall', { headers: bearer(token), data: { service_id: row.id } });
  }
}

export async function setDailyLimit(request: APIRequestContext, token: string, id: number, limit: number): Promise<void> {
  await data(await request.put(`/api/mcp_services/${id}`, { headers: bearer(token), data: { rpd_limit: limit } }), 'set limit');
}

/** An ordinary user (role 1), created by root; an existing one with that name is reused. */
export async function ensureUser(request: APIRequestContext, adminToken: string, username: string, password: string): Promise<void> {
  const res = await request.post('/api/user', {
    headers: bearer(adminToken),
    data: { username, display_name: username, password },
  });
  if (res.status() === 409) return;
  await data(res, `create user ${username}`);
}
