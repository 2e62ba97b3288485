import { Role, UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/infra/passwords.js';
import { issueApiKey } from '../src/modules/users/api-keys.js';
import { bearer, createTestApp, engines, type TestApp } from './harness.js';
import { apiRoutes as apiRoutesOf, fillParams, isPublicApiRoute } from './route-table.js';

/**
 * The route table decides who may call what (docs/architecture.md §8). These checks walk every route the
 * app registered (route-table.ts), so a route added later is covered without touching this file.
 * access-matrix.test.ts goes further: every route against every role, with the answers scanned for secrets.
 */

describe.each(engines)('route authorization on %s', (engine) => {
  let t: TestApp;
  let userToken: string;
  const apiRoutes = () => apiRoutesOf(t.routes);

  beforeAll(async () => {
    t = await createTestApp(engine);
    // Inserted directly so this suite depends only on sign-in, not on the user admin API.
    const key = issueApiKey(t.ctx.secrets);
    const now = Date.now();
    await t.ctx.usersRepo.insert({
      username: 'plain-user',
      display_name: 'Plain User',
      email: '',
      password_hash: await hashPassword('plain-user-password'),
      role: Role.User,
      status: UserStatus.Enabled,
      api_key_hash: key.hash,
      api_key_enc: key.encrypted,
      created_at: now,
      updated_at: now,
    });
    userToken = await t.login('plain-user', 'plain-user-password');
  });
  afterAll(async () => t?.close());

  it('declares a known auth level on every API route', () => {
    expect(apiRoutes().length).toBeGreaterThan(0);
    for (const r of apiRoutes()) expect(['public', 'user', 'admin'], `${r.method} ${r.url}`).toContain(r.auth);
  });

  it('keeps public API routes to the explicit allow-list', () => {
    const unexpected = apiRoutes()
      .filter((r) => r.auth === 'public' && !isPublicApiRoute(r.method, r.url))
      .map((r) => `${r.method} ${r.url}`);
    expect(unexpected).toEqual([]);
  });

  it('answers 401 without a token and 403 to a role-1 user on every admin route', async () => {
    const admin = apiRoutes().filter((r) => r.auth === 'admin');
    expect(admin.length).toBeGreaterThan(0);
    for (const r of admin) {
      const url = fillParams(r.url);
      const method = r.method as 'GET';
      const anonymous = await t.app.inject({ method, url });
      expect(anonymous.statusCode, `${r.method} ${r.url} without a token`).toBe(401);
      expect(anonymous.json()).toMatchObject({ success: false, message: 'Sign-in required' });
      const asUser = await t.app.inject({ method, url, headers: bearer(userToken) });
      expect(asUser.statusCode, `${r.method} ${r.url} as a role-1 user`).toBe(403);
      expect(asUser.json()).toMatchObject({ success: false, message: expect.stringContaining('Permission denied') });
    }
  });

  it('answers 401 without a token, or with a forged one, on every user route', async () => {
    const user = apiRoutes().filter((r) => r.auth === 'user');
    expect(user.length).toBeGreaterThan(0);
    for (const r of user) {
      const url = fillParams(r.url);
      const method = r.method as 'GET';
      expect((await t.app.inject({ method, url })).statusCode, `${r.method} ${r.url} without a token`).toBe(401);
      const forged = await t.app.inject({ method, url, headers: bearer(`${userToken.slice(0, -4)}AAAA`) });
      expect(forged.statusCode, `${r.method} ${r.url} with a forged token`).toBe(401);
    }
  });

  it('lets the same role-1 user through a user route, so the 403s above are about role', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(userToken), payload: {} });
    expect(res.statusCode).toBe(200);
  });
});
