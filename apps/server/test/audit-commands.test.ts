import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import type { AuditEntry } from '@toolport/contract';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackupCommand } from '../src/backup/cli.js';
import { openDatabase } from '../src/db/db.js';
import { runImportCommand } from '../src/modules/market/batch/cli.js';
import { runExportCommand } from '../src/modules/market/export/cli.js';
import { runUserCommand } from '../src/modules/users/cli.js';
import { runRotateSecretCommand } from '../src/secrets-rotation/cli.js';
import { bearer, createTestApp, engines, pgAdminUrl, type TestApp } from './harness.js';

/**
 * The command line is an actor of the audit trail too (decision 0049): each `toolport` command that changes
 * configuration, or copies it out, leaves one entry by the operating system's account, its secrets masked.
 */

const PLANTED = `cli-secret-${Math.random().toString(36).slice(2, 10)}`;

describe.each(engines)('audit entries of toolport commands on %s', (engine) => {
  let t: TestApp;
  let root: Record<string, string>;
  let scratch: string;
  const io = () => {
    const lines: string[] = [];
    const env = {
      DATA_DIR: t.dataDir,
      SECRET_KEY: t.config.secretKey,
      LOG_LEVEL: 'silent',
      ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
    };
    return { env, print: (line: string) => lines.push(line), lines };
  };
  const newest = async (): Promise<number> =>
    Number(
      (
        await t.ctx.db
          .selectFrom('audit_entries')
          .select((eb) => eb.fn.max('id').as('id'))
          .executeTakeFirst()
      )?.id ?? 0,
    );
  const after = async (id: number): Promise<AuditEntry[]> => {
    const res = await t.app.inject({ method: 'GET', url: '/api/audit?page_size=100', headers: root });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data.entries as AuditEntry[]).filter((e) => e.id > id && e.actor_type === 'cli').reverse();
  };
  const operator = userInfo().username;

  beforeAll(async () => {
    t = await createTestApp(engine);
    root = bearer(await t.rootToken());
    scratch = mkdtempSync(path.join(tmpdir(), 'toolport-audit-cli-'));
  });
  let closed = false;
  afterAll(async () => {
    if (!closed) await t?.close();
    else {
      rmSync(t.dataDir, { recursive: true, force: true });
      if (t.config.databaseUrl) {
        const admin = new pg.Client({ connectionString: pgAdminUrl });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${new URL(t.config.databaseUrl).pathname.slice(1)} WITH (FORCE)`);
        await admin.end();
      }
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  it('records user create and reset-password without the passwords', async () => {
    const before = await newest();
    await runUserCommand(['create', 'audited-cli', '--password', `${PLANTED}-1`], io());
    await runUserCommand(['reset-password', 'audited-cli', '--password', `${PLANTED}-2`], io());
    const entries = await after(before);
    const id = (await t.ctx.usersRepo.byUsername('audited-cli'))?.id;
    expect(entries).toEqual([
      expect.objectContaining({
        actor_type: 'cli',
        actor_id: null,
        actor_name: operator,
        address: '',
        action: 'create',
        object_type: 'user',
        object_id: String(id),
        via: 'toolport user create',
        changes: expect.objectContaining({ username: 'audited-cli', password: '********' }),
      }),
      expect.objectContaining({
        action: 'reset_password',
        object_type: 'user',
        object_id: 'audited-cli',
        via: 'toolport user reset-password',
      }),
    ]);
    expect(JSON.stringify(entries)).not.toContain(PLANTED);
  });

  it('records import with the document masked, and export', async () => {
    const file = path.join(scratch, `import-${engine}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          'audited-remote': { type: 'http', url: `http://127.0.0.1:9/mcp?token=${PLANTED}`, headers: { 'X-Api-Key': PLANTED } },
        },
      }),
    );
    const before = await newest();
    await runImportCommand([file], io());
    const out = path.join(scratch, `export-${engine}.json`);
    await runExportCommand(['--include-secrets', out], io());
    const entries = await after(before);
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'import',
        object_type: 'import',
        via: 'toolport import',
        changes: expect.objectContaining({
          file,
          document: {
            mcpServers: {
              'audited-remote': { type: 'http', url: 'http://127.0.0.1:9/mcp?token=********', headers: { 'X-Api-Key': '********' } },
            },
          },
        }),
      }),
      expect.objectContaining({
        action: 'export_services',
        object_type: 'export',
        via: 'toolport export',
        changes: expect.objectContaining({ include_secrets: true }),
      }),
    ]);
    expect(JSON.stringify(entries)).not.toContain(PLANTED);
  });

  it('records a backup; with PostgreSQL (pg_dump’s job) the command refuses and records nothing', async () => {
    const before = await newest();
    const file = path.join(scratch, 'backup.db');
    if (engine === 'postgres') {
      await expect(runBackupCommand([file], io())).rejects.toThrow(/pg_dump/);
      expect(await after(before)).toEqual([]);
      return;
    }
    await runBackupCommand([file], io());
    expect(await after(before)).toEqual([
      expect.objectContaining({ action: 'backup', object_type: 'backup', object_id: file, via: 'toolport backup' }),
    ]);
  });

  it('records a secret rotation in the same transaction as the rotation', async () => {
    const before = await newest();
    const { env, print } = io();
    // The server is stopped first, as the command asks (its database and DATA_DIR stay for the check).
    closed = true;
    await t.app.close();
    await t.ctx.db.destroy();
    const next = 'a-new-secret-key-for-the-audit-test-0123456789';
    await runRotateSecretCommand([], { env: { ...env, NEW_SECRET_KEY: next }, print });
    const { db } = openDatabase({ databaseUrl: t.config.databaseUrl, dataDir: t.dataDir });
    try {
      const rows = await db.selectFrom('audit_entries').selectAll().where('id', '>', before).execute();
      expect(rows).toEqual([
        expect.objectContaining({ actor_type: 'cli', action: 'rotate', object_type: 'secret', via: 'toolport rotate-secret' }),
      ]);
      expect(JSON.parse(rows[0]?.changes ?? '{}')).toMatchObject({ new_key_from: 'NEW_SECRET_KEY' });
      expect(JSON.stringify(rows)).not.toContain(next);
    } finally {
      await db.destroy();
    }
  });
});
