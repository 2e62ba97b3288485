import { ADMIN_PASSWORD, expect, test } from '../support/fixtures';

test.describe('root signs in through the API', () => {
  test('with ADMIN_PASSWORD root gets tokens and its profile', async ({ request }) => {
    const res = await request.post('/api/auth/login', { data: { username: 'root', password: ADMIN_PASSWORD } });
    expect(res.status()).toBe(200);
    const { data } = await res.json();
    expect(data.access_token).toEqual(expect.any(String));
    expect(data.refresh_token).toEqual(expect.any(String));
    expect(data.user).toMatchObject({ username: 'root', role: 100, status: 1 });

    const self = await request.get('/api/user/self', { headers: { authorization: `Bearer ${data.access_token}` } });
    expect(self.status()).toBe(200);
    expect((await self.json()).data.username).toBe('root');
  });

  test('a wrong password is refused', async ({ request }) => {
    const res = await request.post('/api/auth/login', { data: { username: 'root', password: `${ADMIN_PASSWORD}-wrong` } });
    expect(res.status()).toBe(401);
    expect((await res.json()).success).toBe(false);
  });

  test('the signedIn fixture leaves the session where the console reads it', async ({ page, signedIn }) => {
    await page.goto('/');
    const stored = await page.evaluate(() => ({
      token: localStorage.getItem('token'),
      refresh: localStorage.getItem('refresh_token'),
      user: JSON.parse(localStorage.getItem('user') ?? 'null'),
    }));
    expect(stored.token).toBe(signedIn.token);
    expect(stored.refresh).toBe(signedIn.refresh_token);
    expect(stored.user).toMatchObject({ username: 'root', role: 100 });

    // Stored once per tab: a page that clears the session stays signed out after a reload.
    await page.evaluate(() => localStorage.removeItem('token'));
    await page.reload();
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBeNull();
  });
});
