import { USERS_TOTAL_HEADER } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { makeOAuthUser, makeUser } from '../../../test/kits/users.js';

describe.each(engines)('user administration on %s', (engine) => {
  let t: TestApp;
  let root: string;
  let rootId: number;
  beforeAll(async () => {
    t = await createTestApp(engine);
    root = await t.rootToken();
    rootId = (await t.ctx.usersRepo.byUsername('root'))?.id ?? 0;
  });
  afterAll(async () => t?.close());

  const list = (token: string, query = '') => t.app.inject({ method: 'GET', url: `/api/user/${query}`, headers: bearer(token) });
  const search = (token: string, keyword: string) =>
    t.app.inject({ method: 'GET', url: `/api/user/search?keyword=${encodeURIComponent(keyword)}`, headers: bearer(token) });
  const create = (token: string, payload: object) => t.app.inject({ method: 'POST', url: '/api/user', headers: bearer(token), payload });
  const edit = (token: string, payload: object) => t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload });
  const remove = (token: string, id: number | string) => t.app.inject({ method: 'DELETE', url: `/api/user/${id}`, headers: bearer(token) });
  const self = (token: string) => t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(token) });

  // First in the file: it counts every user there is.
  it('pages users ten at a time, newest first, without keys or password hashes', async () => {
    const made: number[] = [];
    for (let i = 0; i < 12; i++) made.push((await makeUser(t, root)).id);
    const first = await list(root, '?p=0');
    const second = await list(root, '?p=1');
    expect(first.statusCode).toBe(200);
    expect(first.headers[USERS_TOTAL_HEADER]).toBe('13');
    const ids0 = first.json().data.map((u: { id: number }) => u.id);
    const ids1 = second.json().data.map((u: { id: number }) => u.id);
    expect(ids0).toEqual(made.slice(2).reverse());
    expect(ids1).toEqual([made[1], made[0], rootId]);
    expect((await list(root)).json().data.map((u: { id: number }) => u.id)).toEqual(ids0);
    expect((await list(root, '?p=2')).json().data).toEqual([]);
    for (const row of [...first.json().data, ...second.json().data]) {
      expect(Object.keys(row)).not.toContain('token');
      expect(Object.keys(row)).not.toContain('password_hash');
      expect(Object.keys(row)).not.toContain('api_key_hash');
      expect(Object.keys(row)).not.toContain('api_key_enc');
    }
  });

  it('refuses the list and the search to a non-admin', async () => {
    const u = await makeUser(t, root);
    expect((await list(u.token)).statusCode).toBe(403);
    expect((await search(u.token, 'root')).statusCode).toBe(403);
  });

  it('searches by part of the username, display name or email, case-insensitively, and by exact id', async () => {
    const u = await makeUser(t, root, { username: 'Searchable_Zed', email: 'zed@findme.example' });
    const names = async (keyword: string) => (await search(root, keyword)).json().data.map((x: { username: string }) => x.username);
    expect(await names('searchable_z')).toEqual(['Searchable_Zed']);
    expect(await names('FINDME')).toEqual(['Searchable_Zed']);
    expect(await names('Name of Searchable')).toEqual(['Searchable_Zed']);
    expect(await names(String(u.id))).toContain('Searchable_Zed');
    expect(await names('no-such-user-anywhere')).toEqual([]);
    // LIKE wildcards in the keyword are literal characters.
    expect(await names('%')).toEqual([]);
    expect(await names('99999999999')).toEqual([]);
  });

  it.each([
    { actor: 'admin', role: 1, status: 201 },
    { actor: 'admin', role: 10, status: 403 },
    { actor: 'root', role: 1, status: 201 },
    { actor: 'root', role: 10, status: 201 },
    { actor: 'user', role: 1, status: 403 },
  ] as const)('$actor creating a user of role $role answers $status', async ({ actor, role, status }) => {
    const token = actor === 'root' ? root : (await makeUser(t, root, { role: actor === 'admin' ? 10 : 1 })).token;
    const username = `c_${actor}_${role}_${Math.random().toString(36).slice(2, 6)}`;
    const res = await create(token, { username, display_name: 'C', password: 'password-1234', role });
    expect(res.statusCode).toBe(status);
    const row = await t.ctx.usersRepo.byUsername(username);
    if (status === 201) {
      expect(res.json().data).toMatchObject({ username, role, status: 1 });
      expect(row?.api_key_hash).toMatch(/^[0-9a-f]{64}$/);
    } else {
      expect(row).toBeUndefined();
    }
  });

  it('refuses a taken username (409), a short password and a role above admin (400)', async () => {
    const u = await makeUser(t, root);
    expect((await create(root, { username: u.username, display_name: '', password: 'password-1234' })).statusCode).toBe(409);
    expect((await create(root, { username: 'shortpw', display_name: '', password: 'short' })).statusCode).toBe(400);
    expect((await create(root, { username: 'toohigh', display_name: '', password: 'password-1234', role: 100 })).statusCode).toBe(400);
  });

  it.each([
    { actor: 'admin', target: 'user', status: 200 },
    { actor: 'admin', target: 'admin', status: 403 },
    { actor: 'admin', target: 'root', status: 403 },
    { actor: 'admin', target: 'self', status: 200 },
    { actor: 'root', target: 'admin', status: 200 },
    { actor: 'root', target: 'self', status: 200 },
  ] as const)('$actor editing $target answers $status', async ({ actor, target, status }) => {
    const admin = await makeUser(t, root, { role: 10 });
    const actorToken = actor === 'root' ? root : admin.token;
    const targets = { user: async () => (await makeUser(t, root)).id, admin: async () => (await makeUser(t, root, { role: 10 })).id };
    const id = target === 'self' ? (actor === 'root' ? rootId : admin.id) : target === 'root' ? rootId : await targets[target]();
    const displayName = `Edited ${Math.random().toString(36).slice(2, 6)}`;
    const res = await edit(actorToken, { id, display_name: displayName });
    expect(res.statusCode).toBe(status);
    const row = await t.ctx.usersRepo.byId(id);
    if (status === 200) expect(row?.display_name).toBe(displayName);
    else expect(row?.display_name).not.toBe(displayName);
  });

  it('keeps the username fixed when editing', async () => {
    const u = await makeUser(t, root);
    expect((await edit(root, { id: u.id, username: u.username, display_name: 'Same Name' })).statusCode).toBe(200);
    const res = await edit(root, { id: u.id, username: `${u.username}x`, display_name: 'Other' });
    expect(res.statusCode).toBe(400);
    expect((await t.ctx.usersRepo.byId(u.id))?.username).toBe(u.username);
  });

  it('sets a password only when one is given, and then ends the user’s sessions', async () => {
    const u = await makeUser(t, root);
    expect((await edit(root, { id: u.id, display_name: 'Kept', password: '' })).statusCode).toBe(200);
    expect((await self(u.token)).statusCode).toBe(200);
    expect((await edit(root, { id: u.id, display_name: 'Kept', password: 'set-by-admin-1' })).statusCode).toBe(200);
    expect((await self(u.token)).statusCode).toBe(401);
    expect((await self(await t.login(u.username, 'set-by-admin-1'))).statusCode).toBe(200);
  });

  it('answers 404 for editing or deleting a user that does not exist', async () => {
    expect((await edit(root, { id: 987654, display_name: 'x' })).statusCode).toBe(404);
    expect((await remove(root, 987654)).statusCode).toBe(404);
    expect((await remove(root, 'abc')).statusCode).toBe(400);
  });

  it.each([
    { actor: 'admin', target: 'user', status: 200 },
    { actor: 'admin', target: 'admin', status: 403 },
    { actor: 'admin', target: 'root', status: 403 },
    { actor: 'admin', target: 'self', status: 403 },
    { actor: 'root', target: 'admin', status: 200 },
    { actor: 'root', target: 'self', status: 403 },
  ] as const)('$actor deleting $target answers $status', async ({ actor, target, status }) => {
    const admin = await makeUser(t, root, { role: 10 });
    const actorToken = actor === 'root' ? root : admin.token;
    const targets = { user: async () => (await makeUser(t, root)).id, admin: async () => (await makeUser(t, root, { role: 10 })).id };
    const id = target === 'self' ? (actor === 'root' ? rootId : admin.id) : target === 'root' ? rootId : await targets[target]();
    const res = await remove(actorToken, id);
    expect(res.statusCode).toBe(status);
    expect(await t.ctx.usersRepo.byId(id)).toEqual(status === 200 ? undefined : expect.objectContaining({ id }));
  });

  it('deletes a user with their identities and refresh tokens, and their token stops working', async () => {
    const o = await makeOAuthUser(t, '777');
    await t.ctx.auth.issue((await t.ctx.usersRepo.byId(o.id)) ?? expect.fail('no user'));
    expect((await self(o.token)).statusCode).toBe(200);
    expect((await remove(root, o.id)).json()).toMatchObject({ success: true, message: 'User deleted' });
    expect((await self(o.token)).statusCode).toBe(401);
    const identities = await t.ctx.db.selectFrom('provider_identities').select('id').where('user_id', '=', o.id).execute();
    const refresh = await t.ctx.db.selectFrom('refresh_tokens').select('id').where('user_id', '=', o.id).execute();
    expect(identities).toEqual([]);
    expect(refresh).toEqual([]);
  });
});
