import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { CliUsageError } from '../../cli/args.js';
import { hashApiKey } from './api-keys.js';
import { runUserCommand } from './cli.js';

describe.each(engines)('toolport user … on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(engine);
  });
  afterAll(async () => t?.close());

  /** Runs the command against the test app's DATA_DIR and database, as an operator's shell would. */
  const run = async (...args: string[]) => {
    const lines: string[] = [];
    const env = {
      DATA_DIR: t.dataDir,
      SECRET_KEY: t.config.secretKey,
      LOG_LEVEL: 'silent',
      ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
    };
    await runUserCommand(args, { env, print: (line) => lines.push(line) });
    return lines;
  };
  const generatedPassword = (lines: string[]) => lines.find((l) => l.startsWith('Password: '))?.slice('Password: '.length) ?? '';

  it('creates an admin with the given password, display name and a working API key', async () => {
    const lines = await run('create', 'cli-admin', '--password', 'cli-password-1', '--role', 'admin', '--display-name', 'CLI Admin');
    expect(lines[0]).toMatch(/^Created admin "cli-admin" \(id \d+\)$/);
    expect(generatedPassword(lines)).toBe('');
    const row = await t.ctx.usersRepo.byUsername('cli-admin');
    expect(row).toMatchObject({ role: 10, status: 1, display_name: 'CLI Admin' });

    const token = await t.login('cli-admin', 'cli-password-1');
    const self = (await t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(token) })).json().data;
    expect(hashApiKey(self.token)).toBe(row?.api_key_hash);
    expect((await t.app.inject({ method: 'GET', url: '/api/option/', headers: bearer(token) })).statusCode).toBe(200);
  });

  it('creates a plain user with a generated password it prints once', async () => {
    const lines = await run('create', 'cli-user');
    const password = generatedPassword(lines);
    expect(password.length).toBeGreaterThanOrEqual(16);
    expect((await t.ctx.usersRepo.byUsername('cli-user'))?.role).toBe(1);
    await expect(t.login('cli-user', password)).resolves.toMatch(/^ey/);
  });

  it('refuses a taken username, a bad role, a short password and malformed commands', async () => {
    await expect(run('create', 'root', '--password', 'whatever-123')).rejects.toThrow('The username "root" is already taken');
    await expect(run('create', 'someone', '--role', 'owner')).rejects.toThrow(CliUsageError);
    await expect(run('create', 'someone', '--password', 'short')).rejects.toThrow(/password/);
    await expect(run('create', 'bad name!', '--password', 'whatever-123')).rejects.toThrow(/username/);
    await expect(run('create')).rejects.toThrow(CliUsageError);
    await expect(run('create', 'a', 'b')).rejects.toThrow(CliUsageError);
    await expect(run('create', 'someone', '--colour', 'red')).rejects.toThrow(CliUsageError);
    await expect(run('rename', 'someone')).rejects.toThrow(CliUsageError);
    expect(await t.ctx.usersRepo.byUsername('someone')).toBeUndefined();
  });

  it('resets a password: the new one works, the old one and every session end', async () => {
    await run('create', 'cli-reset', '--password', 'before-reset-1');
    const pair = (
      await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'cli-reset', password: 'before-reset-1' } })
    ).json().data;
    const before = await t.ctx.usersRepo.byUsername('cli-reset');

    const lines = await run('reset-password', 'cli-reset', '--password', 'after-reset-1');
    expect(lines[0]).toContain('cli-reset');
    const after = await t.ctx.usersRepo.byUsername('cli-reset');
    expect(after?.auth_version).toBe((before?.auth_version ?? 0) + 1);
    const live = await t.ctx.db
      .selectFrom('refresh_tokens')
      .select('id')
      .where('user_id', '=', after?.id ?? 0)
      .where('revoked_at', 'is', null)
      .execute();
    expect(live).toEqual([]);
    const refresh = await t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: pair.refresh_token } });
    expect(refresh.statusCode).toBe(401);
    await expect(t.login('cli-reset', 'before-reset-1')).rejects.toThrow();
    await expect(t.login('cli-reset', 'after-reset-1')).resolves.toMatch(/^ey/);
  });

  it('resets to a generated password when none is given, and refuses an unknown user', async () => {
    await run('create', 'cli-reset2', '--password', 'before-reset-2');
    const password = generatedPassword(await run('reset-password', 'cli-reset2'));
    await expect(t.login('cli-reset2', password)).resolves.toMatch(/^ey/);
    await expect(run('reset-password', 'nobody-here')).rejects.toThrow('User not found');
  });
});
