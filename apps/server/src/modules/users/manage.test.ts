import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { makeUser } from '../../../test/kits/users.js';

type Actor = 'admin' | 'root';
type Target = 'user' | 'admin' | 'root' | 'self';
type Action = 'enable' | 'disable' | 'promote' | 'demote';

/** Every combination of who acts, on whom, doing what, and the status the API must answer. */
const rules: [Actor, Target, Action, number][] = [
  ['admin', 'user', 'enable', 200],
  ['admin', 'admin', 'enable', 403],
  ['admin', 'root', 'enable', 403],
  ['admin', 'self', 'enable', 200],
  ['admin', 'user', 'disable', 200],
  ['admin', 'admin', 'disable', 403],
  ['admin', 'root', 'disable', 403],
  ['admin', 'self', 'disable', 403],
  ['admin', 'user', 'promote', 403],
  ['admin', 'admin', 'promote', 403],
  ['admin', 'root', 'promote', 403],
  ['admin', 'self', 'promote', 403],
  ['admin', 'user', 'demote', 403],
  ['admin', 'admin', 'demote', 403],
  ['admin', 'root', 'demote', 403],
  ['admin', 'self', 'demote', 403],
  ['root', 'user', 'enable', 200],
  ['root', 'admin', 'enable', 200],
  ['root', 'self', 'enable', 200],
  ['root', 'user', 'disable', 200],
  ['root', 'admin', 'disable', 200],
  ['root', 'self', 'disable', 403],
  ['root', 'user', 'promote', 200],
  ['root', 'admin', 'promote', 400],
  ['root', 'self', 'promote', 400],
  ['root', 'user', 'demote', 400],
  ['root', 'admin', 'demote', 200],
  ['root', 'self', 'demote', 400],
];

const expectedAfter = (action: Action, role: number, status: number) => {
  if (action === 'enable') return { role, status: 1 };
  if (action === 'disable') return { role, status: 2 };
  return { role: action === 'promote' ? 10 : 1, status };
};

describe.each(engines)('POST /user/manage on %s', (engine) => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    t = await createTestApp(engine);
    root = await t.rootToken();
  });
  afterAll(async () => t?.close());

  const manage = (token: string, username: string, action: string) =>
    t.app.inject({ method: 'POST', url: '/api/user/manage', headers: bearer(token), payload: { username, action } });
  const get = (token: string, url: string) => t.app.inject({ method: 'GET', url, headers: bearer(token) });

  it.each(rules)('%s on %s: %s answers %i', async (actor, target, action, expected) => {
    const admin = await makeUser(t, root, { role: 10 });
    const actorToken = actor === 'root' ? root : admin.token;
    const targetName =
      target === 'root' || (target === 'self' && actor === 'root')
        ? 'root'
        : target === 'self'
          ? admin.username
          : (await makeUser(t, root, { role: target === 'admin' ? 10 : 1 })).username;
    const before = await t.ctx.usersRepo.byUsername(targetName);
    if (!before) throw new Error('target missing');

    const res = await manage(actorToken, targetName, action);
    expect(res.statusCode).toBe(expected);
    expect(res.json().success).toBe(expected === 200);
    const after = await t.ctx.usersRepo.byUsername(targetName);
    const want = expected === 200 ? expectedAfter(action, before.role, before.status) : { role: before.role, status: before.status };
    expect({ role: after?.role, status: after?.status }).toEqual(want);
  });

  it('refuses every action to a plain user, and an unknown username is 404', async () => {
    const u = await makeUser(t, root);
    const other = await makeUser(t, root);
    for (const action of ['enable', 'disable', 'promote', 'demote']) {
      expect((await manage(u.token, other.username, action)).statusCode).toBe(403);
    }
    expect((await manage(root, 'nobody-by-this-name', 'disable')).statusCode).toBe(404);
    expect((await manage(root, other.username, 'explode')).statusCode).toBe(400);
  });

  it('explains a refusal in the caller’s language', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/user/manage',
      headers: { ...bearer(root), 'accept-language': 'zh-CN' },
      payload: { username: 'root', action: 'disable' },
    });
    expect(res.json().message).toBe('不能禁用超级管理员');
  });

  // Each first request below warms the principal cache, so the second proves the change reached it.
  it('a disabled user loses access at their next request, and regains it when enabled', async () => {
    const u = await makeUser(t, root);
    expect((await get(u.token, '/api/user/self')).statusCode).toBe(200);
    expect((await manage(root, u.username, 'disable')).statusCode).toBe(200);
    expect((await get(u.token, '/api/user/self')).statusCode).toBe(401);
    expect((await manage(root, u.username, 'enable')).statusCode).toBe(200);
    expect((await get(u.token, '/api/user/self')).statusCode).toBe(200);
  });

  it('a deleted user loses access at their next request', async () => {
    const u = await makeUser(t, root);
    expect((await get(u.token, '/api/user/self')).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/user/${u.id}`, headers: bearer(root) })).statusCode).toBe(200);
    expect((await get(u.token, '/api/user/self')).statusCode).toBe(401);
  });

  it('a demoted admin loses admin access at their next request; a promoted user gains it', async () => {
    const a = await makeUser(t, root, { role: 10 });
    expect((await get(a.token, '/api/option/')).statusCode).toBe(200);
    expect((await manage(root, a.username, 'demote')).statusCode).toBe(200);
    expect((await get(a.token, '/api/option/')).statusCode).toBe(403);
    expect((await get(a.token, '/api/user/self')).statusCode).toBe(200);
    expect((await manage(root, a.username, 'promote')).statusCode).toBe(200);
    expect((await get(a.token, '/api/option/')).statusCode).toBe(200);
  });
});
