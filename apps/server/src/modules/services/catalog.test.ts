import { UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { serviceRow, suiteUser } from '../../../test/kits/services.js';

describe.each(engines)('service catalog on %s', (engine) => {
  let t: TestApp;
  let serviceId: number;

  beforeAll(async () => {
    t = await createTestApp(engine);
    const row = await t.ctx.db
      .insertInto('services')
      .values(
        serviceRow({
          name: 'cat-svc',
          command: '/usr/bin/env',
          args_json: '["--flag", "two words"]',
          env_enc: t.ctx.secrets.encryptJson({ API_TOKEN: 'tok-1', LOG_LEVEL: 'debug' }),
          env_schema_json: JSON.stringify([{ name: 'LOG_LEVEL', is_secret: false }, { name: 'OPTIONAL_KEY' }]),
          enabled: 0,
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    serviceId = row.id;
  });
  afterAll(async () => t?.close());

  it('gives the gateway services with secrets decrypted and arguments parsed', async () => {
    const spec = await t.ctx.catalog.byName('cat-svc');
    expect(spec).toMatchObject({
      id: serviceId,
      name: 'cat-svc',
      displayName: 'cat-svc',
      type: 'stdio',
      command: '/usr/bin/env',
      args: ['--flag', 'two words'],
      env: { API_TOKEN: 'tok-1', LOG_LEVEL: 'debug' },
      headers: {},
      enabled: false,
      isolation: 'shared',
      rpdLimit: 0,
    });
    // Secret unless declared otherwise: undeclared API_TOKEN and declared OPTIONAL_KEY are, LOG_LEVEL is not.
    expect(spec?.secretEnvNames.sort()).toEqual(['API_TOKEN', 'OPTIONAL_KEY']);
    expect(await t.ctx.catalog.byId(serviceId)).toEqual(spec);
    expect((await t.ctx.catalog.enabledServices()).map((s) => s.id)).not.toContain(serviceId);
    expect(await t.ctx.catalog.byName('nope')).toBeUndefined();
  });

  it('finds the owner of an API key, and sees a disabled user at once after user.changed', async () => {
    const user = await suiteUser(t);
    expect(await t.ctx.catalog.userByApiKey(user.apiKey)).toMatchObject({ id: user.id, enabled: true, role: 1 });
    expect(await t.ctx.catalog.userByApiKey(`${user.apiKey}x`)).toBeUndefined();

    await t.ctx.usersRepo.update(user.id, { status: UserStatus.Disabled });
    // The users API emits this with every change; it drops the cached answer.
    t.ctx.events.emit({ type: 'user.changed', userId: user.id });
    expect((await t.ctx.catalog.userByApiKey(user.apiKey))?.enabled).toBe(false);
  });

  it('stores health results', async () => {
    await t.ctx.catalog.recordHealth(serviceId, { status: 'healthy', details: '11 tools, 40 ms', toolCount: 11 });
    const row = await t.ctx.db.selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ health_status: 'healthy', health_details: '11 tools, 40 ms', tool_count: 11 });
    expect(row.last_health_check).toEqual(expect.any(Number));
    // Without a tool count the last known one stays.
    await t.ctx.catalog.recordHealth(serviceId, { status: 'unhealthy', details: 'exited with code 1' });
    const after = await t.ctx.db.selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ health_status: 'unhealthy', tool_count: 11 });
  });

  it('drops a health result meant for a disabled service once it is enabled again (a late write loses to a toggle)', async () => {
    const enabledOf = async () =>
      await t.ctx.db.selectFrom('services').select(['enabled', 'health_status']).where('id', '=', serviceId).executeTakeFirstOrThrow();
    await t.ctx.db.updateTable('services').set({ enabled: 1, health_status: 'unknown' }).where('id', '=', serviceId).execute();
    await t.ctx.catalog.recordHealth(serviceId, { status: 'stopped', details: 'service disabled' }, false);
    expect(await enabledOf()).toEqual({ enabled: 1, health_status: 'unknown' });

    await t.ctx.db.updateTable('services').set({ enabled: 0 }).where('id', '=', serviceId).execute();
    await t.ctx.catalog.recordHealth(serviceId, { status: 'stopped', details: 'service disabled' }, false);
    expect(await enabledOf()).toEqual({ enabled: 0, health_status: 'stopped' });
    await t.ctx.db.updateTable('services').set({ enabled: 1 }).where('id', '=', serviceId).execute();
  });
});
