import type { APIRequestContext } from '@playwright/test';
import { expect } from '@playwright/test';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from './constants';

export interface Credentials {
  username: string;
  password: string;
}

let sequence = 0;

/**
 * A new user with a password, created by root through the real API. Each call makes a fresh name, so specs
 * running side by side (and a password changed by one of them) never meet.
 */
export async function createUser(request: APIRequestContext, prefix: string, role: 1 | 10 = 1): Promise<Credentials> {
  const login = await request.post('/api/auth/login', { data: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD } });
  const admin = (await login.json()).data.access_token as string;
  sequence += 1;
  const username = `${prefix}-${process.pid}-${Date.now().toString(36)}-${sequence}`.slice(0, 32);
  const credentials = { username, password: `${prefix}-password-1` };
  const res = await request.post('/api/user', {
    headers: { Authorization: `Bearer ${admin}` },
    data: { ...credentials, display_name: '', role },
  });
  expect(res.status(), `creating ${username}: ${(await res.json()).message ?? ''}`).toBe(201);
  return credentials;
}
