import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOAuth, startFakeOAuth } from '../../../test/fake-oauth.js';
import { ADMIN_PASSWORD, bearer, createPgDatabase, engines } from '../../../test/harness.js';
import { configureProvider, finishSignIn, signInThrough, startSignIn, visitProvider } from '../../../test/kits/oauth.js';
import { type BuiltApp, buildApp } from '../../app.js';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/db.js';
import { createLogger } from '../../infra/logger.js';

/**
 * Which providers the console may offer, and what happens when one is off or half set up. The app
 * is built here with a logger that keeps every line, so the suite can prove that no client secret
 * reaches a log or an answer.
 */
describe.each(engines)('provider configuration and secrets on %s', (engine) => {
  let fake: FakeOAuth;
  let t: BuiltApp;
  let cleanup: () => Promise<void>;
  const logLines: string[] = [];
  const answers: string[] = [];

  beforeAll(async () => {
    fake = await startFakeOAuth();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-oauth-'));
    const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
    const config = loadConfig({
      DATA_DIR: dataDir,
      ADMIN_PASSWORD,
      SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
      LOG_LEVEL: 'trace',
      ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
      ...fake.env,
    });
    const database = openDatabase(config);
    const logger = createLogger(config.logLevel, { write: (line: string) => void logLines.push(line) });
    const built = await buildApp({ config, database, logger, print: () => undefined });
    // Every answer of the suite is kept, headers and body, to be searched for secrets at the end.
    built.app.addHook('onSend', async (_req, reply, payload) => {
      answers.push(JSON.stringify(reply.getHeaders()), typeof payload === 'string' ? payload : '');
      return payload;
    });
    await built.app.ready();
    t = built;
    cleanup = async () => {
      await built.app.close();
      await database.db.destroy();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  });
  afterAll(async () => {
    await cleanup?.();
    await fake?.close();
  });

  const status = async () => (await t.app.inject({ method: 'GET', url: '/api/status' })).json().data;
  const authorize = (provider: string, lang = 'en') =>
    t.app.inject({ method: 'GET', url: `/api/oauth/${provider}/authorize`, headers: { 'accept-language': lang } });

  it('refuses a provider that is off, or has no client id, or no secret, in English and Chinese', async () => {
    expect(await status()).toMatchObject({ github_oauth: false, google_oauth: false, github_client_id: '', google_client_id: '' });
    const off = await authorize('github');
    expect(off.statusCode).toBe(400);
    expect(off.json()).toMatchObject({
      success: false,
      code: 'oauth_not_configured',
      message: 'GitHub OAuth is not configured, please contact an administrator to set it up',
    });
    expect((await authorize('google', 'zh-CN')).json().message).toBe('Google OAuth 未配置，请联系管理员进行配置');
    const callback = await finishSignIn(t, 'google', { code: 'c', state: 's' }, { lang: 'zh-CN' });
    expect(callback.statusCode).toBe(400);
    expect(callback.json().message).toMatch(/^Google OAuth 未配置/);

    // Switched on with an id but without the secret, the code could never be exchanged.
    await t.ctx.options.set('GitHubClientId', fake.clients.github.clientId);
    await t.ctx.options.set('GitHubOAuthEnabled', 'true');
    // /api/status agrees with the sign-in routes: no secret, no button.
    expect((await status()).github_oauth).toBe(false);
    expect((await authorize('github')).json().code).toBe('oauth_not_configured');
  });

  it('offers a configured provider in /api/status with its client id, and stops when it is switched off', async () => {
    await configureProvider(t, fake, 'github');
    await configureProvider(t, fake, 'google');
    expect(await status()).toMatchObject({
      github_oauth: true,
      github_client_id: fake.clients.github.clientId,
      google_oauth: true,
      google_client_id: fake.clients.google.clientId,
    });
    const started = await startSignIn(t, 'github');
    const params = await visitProvider(started.url);
    await t.ctx.options.set('GitHubOAuthEnabled', 'false');
    expect((await status()).github_oauth).toBe(false);
    expect((await finishSignIn(t, 'github', params, { cookie: started.cookie })).json().code).toBe('oauth_not_configured');
    await t.ctx.options.set('GitHubOAuthEnabled', 'true');
  });

  it('never puts a client secret in an answer or a log line', async () => {
    const login = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: ADMIN_PASSWORD } });
    const admin = bearer(login.json().data.access_token);
    for (const provider of ['github', 'google'] as const) {
      expect((await signInThrough(t, provider)).statusCode).toBe(200);
      const started = await startSignIn(t, provider);
      const params = await visitProvider(started.url);
      await finishSignIn(t, provider, { ...params, code: 'not-a-real-code' }, { cookie: started.cookie });
    }
    const options = await t.app.inject({ method: 'GET', url: '/api/option/', headers: admin });
    expect(options.statusCode).toBe(200);
    expect(answers.length).toBeGreaterThan(10);
    expect(logLines.length).toBeGreaterThan(10);
    for (const secret of [fake.clients.github.clientSecret, fake.clients.google.clientSecret]) {
      expect(answers.join('\n')).not.toContain(secret);
      expect(logLines.join('')).not.toContain(secret);
    }
  });
});
