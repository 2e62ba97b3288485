import { optionKeys } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import type { ConfigEvent } from '../../infra/events.js';

describe.each(engines)('preferences on %s', (engine) => {
  let t: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(engine);
    admin = bearer(await t.rootToken());
  });
  afterAll(async () => t?.close());

  const put = (key: string, value: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'PUT', url: '/api/option/', headers: { ...admin, ...headers }, payload: { key, value } });
  const list = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/option/', headers: admin });
    expect(res.statusCode).toBe(200);
    return Object.fromEntries((res.json().data as { key: string; value: string }[]).map((o) => [o.key, o.value]));
  };
  const status = async () => (await t.app.inject({ method: 'GET', url: '/api/status' })).json().data;
  const rawRow = (key: string) => t.ctx.db.selectFrom('options').select('value').where('key', '=', key).executeTakeFirst();

  it('lists every known key with its default', async () => {
    const values = await list();
    expect(Object.keys(values).sort()).toEqual([...optionKeys].sort());
    expect(values).toMatchObject({ StdioServiceStartupStrategy: 'boot', GitHubOAuthEnabled: 'false', TimeZone: 'UTC' });
  });

  it('refuses an unknown key with 400 naming it, in English and Chinese', async () => {
    const en = await put('NotARealKey', 'x');
    expect(en.statusCode).toBe(400);
    expect(en.json()).toMatchObject({ success: false, code: 'unknown_option', message: 'Unknown preference "NotARealKey"' });
    const zh = await put('NotARealKey', 'x', { 'accept-language': 'zh-CN' });
    expect(zh.statusCode).toBe(400);
    expect(zh.json().message).toBe('未知的设置项“NotARealKey”');
    expect(await rawRow('NotARealKey')).toBeUndefined();
  });

  it('stores ServerAddress without its trailing slash and refuses what is not an http(s) URL', async () => {
    expect((await put('ServerAddress', 'https://gateway.example.com/')).statusCode).toBe(200);
    expect((await list()).ServerAddress).toBe('https://gateway.example.com');
    expect((await status()).server_address).toBe('https://gateway.example.com');

    for (const bad of ['not a url', 'ftp://gateway.example.com', 'https://gateway.example.com/?q=1']) {
      const res = await put('ServerAddress', bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().message).toContain('ServerAddress');
    }
    const zh = await put('ServerAddress', 'not a url', { 'accept-language': 'zh-CN' });
    expect(zh.json().message).toMatch(/^设置项 ServerAddress 的值无效：/);
    expect((await list()).ServerAddress).toBe('https://gateway.example.com');
  });

  it('stores AllowedOrigins as normalised origins and refuses an entry that is not exactly an origin, naming it', async () => {
    expect((await put('AllowedOrigins', 'https://App.example.com/, http://localhost:5173 https://app.example.com')).statusCode).toBe(200);
    expect((await list()).AllowedOrigins).toBe('https://app.example.com\nhttp://localhost:5173');
    for (const bad of ['app.example.com', 'https://app.example.com/path', 'ftp://app.example.com', 'https://app.example.com?x=1']) {
      const res = await put('AllowedOrigins', `https://ok.example.com, ${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().message).toContain(`"${bad}"`);
    }
    const zh = await put('AllowedOrigins', 'nope', { 'accept-language': 'zh-CN' });
    expect(zh.json().message).toMatch(/^设置项 AllowedOrigins 的值无效：“nope”/);
    expect((await list()).AllowedOrigins).toBe('https://app.example.com\nhttp://localhost:5173');
    expect((await put('AllowedOrigins', '')).statusCode).toBe(200);
  });

  it('accepts booleans as JSON or text and refuses anything else', async () => {
    expect((await put('RegistrationEnabled', false)).statusCode).toBe(200);
    expect((await list()).RegistrationEnabled).toBe('false');
    expect((await status()).registration_enabled).toBe(false);
    expect((await put('RegistrationEnabled', 'TRUE')).statusCode).toBe(200);
    expect((await status()).registration_enabled).toBe(true);

    const res = await put('RegistrationEnabled', 'yes');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Invalid value for preference RegistrationEnabled: must be true or false');
  });

  it('accepts only boot or demand as the startup strategy', async () => {
    expect((await put('StdioServiceStartupStrategy', 'demand')).statusCode).toBe(200);
    expect(t.ctx.options.get('StdioServiceStartupStrategy')).toBe('demand');
    const res = await put('StdioServiceStartupStrategy', 'lazy', { 'accept-language': 'zh-CN' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('设置项 StdioServiceStartupStrategy 的值无效：必须为 boot 或 demand');
    expect((await put('StdioServiceStartupStrategy', 'boot')).statusCode).toBe(200);
  });

  it('checks whole-number preferences against their range', async () => {
    expect((await put('StdioIdleTimeoutMinutes', 15)).statusCode).toBe(200);
    expect(t.ctx.options.int('StdioIdleTimeoutMinutes')).toBe(15);
    for (const bad of ['0', '-1', '2.5', 'ten']) expect((await put('StdioIdleTimeoutMinutes', bad)).statusCode, bad).toBe(400);
    expect((await put('TimeZone', 'Mars/Olympus')).statusCode).toBe(400);
    expect((await put('TimeZone', 'Asia/Shanghai')).statusCode).toBe(200);
  });

  it('refuses to enable a sign-in provider without a client id', async () => {
    for (const [provider, key] of [
      ['GitHub', 'GitHubOAuthEnabled'],
      ['Google', 'GoogleOAuthEnabled'],
    ]) {
      const res = await put(key as string, true);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'client_id_required',
        message: `Set the ${provider} client ID before enabling ${provider} sign-in`,
      });
    }
    expect((await list()).GitHubOAuthEnabled).toBe('false');
  });

  it('returns secrets masked, stores them encrypted and keeps them when the mask is sent back', async () => {
    const secret = 'gh-client-secret-0123456789';
    expect((await put('GitHubClientSecret', secret)).statusCode).toBe(200);
    expect((await list()).GitHubClientSecret).toBe('********');

    const row = await rawRow('GitHubClientSecret');
    expect(row?.value).toBeTruthy();
    expect(row?.value).not.toContain(secret);
    expect(t.ctx.secrets.decrypt(row?.value ?? '')).toBe(secret);

    expect((await put('GitHubClientSecret', '********')).statusCode).toBe(200);
    expect((await rawRow('GitHubClientSecret'))?.value).toBe(row?.value);
    expect(t.ctx.options.get('GitHubClientSecret')).toBe(secret);

    // What was stored survives a reload from the database, as on a restart.
    await t.ctx.options.load();
    expect(t.ctx.options.get('GitHubClientSecret')).toBe(secret);
  });

  it('shows a provider on /api/status only when it is enabled and has a client id and secret, and never its secret', async () => {
    expect((await put('GoogleClientSecret', 'google-secret-value-42')).statusCode).toBe(200);
    expect((await put('GitHubClientSecret', '')).statusCode).toBe(200);
    expect((await put('GitHubClientId', 'gh-client-id')).statusCode).toBe(200);
    expect(await status()).toMatchObject({ github_oauth: false, github_client_id: 'gh-client-id', google_oauth: false });

    expect((await put('GitHubOAuthEnabled', true)).statusCode).toBe(200);
    // Enabled with an id but no secret: the sign-in routes would answer "not configured", so neither does status.
    expect((await status()).github_oauth).toBe(false);
    expect((await put('GitHubClientSecret', 'gh-client-secret-0123456789')).statusCode).toBe(200);
    expect(await status()).toMatchObject({ github_oauth: true, github_client_id: 'gh-client-id', google_oauth: false });

    // Clearing the id of an enabled provider makes it unusable rather than half-configured.
    expect((await put('GitHubClientId', '')).statusCode).toBe(200);
    expect((await status()).github_oauth).toBe(false);

    const body = (await t.app.inject({ method: 'GET', url: '/api/status' })).body;
    expect(body).not.toContain('gh-client-secret-0123456789');
    expect(body).not.toContain('google-secret-value-42');
    expect(body).not.toContain('********');
  });

  it('announces every accepted change on ctx.events and nothing for a refused one', async () => {
    const seen: ConfigEvent[] = [];
    const off = t.ctx.events.on((e) => seen.push(e));
    try {
      await put('HealthCheckIntervalSeconds', 60);
      await put('HealthCheckIntervalSeconds', 'soon');
      await put('UnknownKey', 1);
    } finally {
      off();
    }
    expect(seen).toEqual([{ type: 'option.changed', key: 'HealthCheckIntervalSeconds' }]);
  });
});
