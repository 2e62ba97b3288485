import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role, UserStatus } from '@toolport/contract';
import { expect, vi } from 'vitest';
import type { Engine } from '../../src/db/db.js';
import { signAccessToken } from '../../src/http/access-tokens.js';
import { issueApiKey } from '../../src/modules/users/api-keys.js';
import { bearer, createTestApp, type TestApp } from '../harness.js';

let counter = 0;

export interface SuiteUser {
  id: number;
  token: string;
  apiKey: string;
  headers: { authorization: string };
}

/**
 * A user stored directly with an access token as sign-in would issue it: these suites are about
 * services, and signing dozens of users in through the API would trip the sign-in rate limit.
 */
export async function suiteUser(t: TestApp, role: number = Role.User): Promise<SuiteUser> {
  counter += 1;
  const key = issueApiKey(t.ctx.secrets);
  const now = Date.now();
  const row = await t.ctx.usersRepo.insert({
    username: `svc_user_${counter}_${Math.random().toString(36).slice(2, 7)}`,
    display_name: '',
    email: '',
    password_hash: null,
    role,
    status: UserStatus.Enabled,
    api_key_hash: key.hash,
    api_key_enc: key.encrypted,
    created_at: now,
    updated_at: now,
  });
  const token = await signAccessToken(t.ctx.secrets.jwtKey, { userId: row.id, authVersion: row.auth_version });
  return { id: row.id, token, apiKey: key.plain, headers: bearer(token) };
}

/** The executable of the real MCP test server, as an admin would type its absolute path. */
export const everythingBin = (): string => new URL('../../../../node_modules/.bin/mcp-server-everything', import.meta.url).pathname;

export { serviceRow } from './service-row.js';

/** Starting a real server takes a moment; the bound only stops a broken run from hanging. */
export const POLL = { timeout: 25_000, interval: 100 };

/** An install task as install_status answers it once it has finished. */
export interface FinishedTask {
  status: string;
  logs: string[];
  error_message: string;
}

export interface StdioServiceKit {
  t: TestApp;
  admin: SuiteUser;
  user: SuiteUser;
  /** A temp directory of the suite's own (scripts, PID files), removed on close. */
  scratch: string;
  /** Creates a custom stdio service as the admin (201 expected); its install task runs the first health check. */
  createStdio(payload: { name: string; command: string } & Record<string, unknown>): Promise<{ service_id: number; task_id: string }>;
  /** Polls install_status as the admin until the task has completed or failed. */
  finishedTask(taskId: string): Promise<FinishedTask>;
  close(): Promise<void>;
}

/**
 * The suites about custom stdio services through the real gateway (health checks, reconnect): the app on
 * `engine` with an admin and a user, and a scratch directory.
 */
export async function startStdioServiceKit(engine: Engine): Promise<StdioServiceKit> {
  const t = await createTestApp(engine);
  const admin = await suiteUser(t, Role.Admin);
  const user = await suiteUser(t);
  const scratch = mkdtempSync(path.join(tmpdir(), 'toolport-stdio-services-'));
  return {
    t,
    admin,
    user,
    scratch,
    async createStdio(payload) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/mcp_market/custom_service',
        headers: admin.headers,
        payload: { type: 'stdio', ...payload },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data as { service_id: number; task_id: string };
    },
    async finishedTask(taskId) {
      let data: FinishedTask = { status: '', logs: [], error_message: '' };
      await vi.waitFor(async () => {
        const res = await t.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${taskId}`, headers: admin.headers });
        data = res.json().data;
        expect(['completed', 'failed']).toContain(data.status);
      }, POLL);
      return data;
    },
    async close() {
      await t.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
