import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseGate, DatabaseUnavailableError } from './availability.js';
import { openDatabase } from './db.js';

describe('the database gate', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolport-gate-'));
  const handle = openDatabase({ dataDir: dir });
  afterAll(async () => {
    await handle.db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a database that answers `select 1` up when one read was only slow', async () => {
    const gate = new DatabaseGate(handle.db);
    const changes: boolean[] = [];
    gate.onChange((up) => changes.push(up));
    const slow = new Promise<string>((resolve) => setTimeout(() => resolve('late'), 200));
    await expect(gate.read(() => slow, 20)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // The confirming `select 1` answers: the next read goes to the database, which answers.
    await new Promise((r) => setTimeout(r, 100));
    expect(gate.up).toBe(true);
    expect(await gate.read(async () => 'now')).toBe('now');
    expect(changes).toEqual([]);
    gate.close();
  });

  it('takes a refused connection as away at once, and later reads fail without asking', async () => {
    const gate = new DatabaseGate(handle.db);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    await expect(gate.read(() => Promise.reject(refused))).rejects.toThrow('ECONNREFUSED');
    expect(gate.up).toBe(false);
    let asked = false;
    await expect(
      gate.read(async () => {
        asked = true;
        return 1;
      }),
    ).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(asked).toBe(false);
    gate.close();
  });
});
