import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.js';
import { ensureBuiltCli, exitOf, runCli } from './built-cli.js';

/**
 * An operator with a bad setting learns it at once from one plain line naming the variable, and
 * the built server exits 1 instead of hanging or printing a stack trace.
 */
const STACK_FRAME = /^\s+at .+/m;

describe('toolport start with a bad environment', () => {
  let root: string;
  beforeAll(async () => {
    await ensureBuiltCli();
    root = mkdtempSync(path.join(tmpdir(), 'toolport-cli-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const dataDir = (name: string) => path.join(root, name);

  it('exits 1 naming DATABASE_URL when the database cannot be reached', async () => {
    const run = runCli(['start'], { DATA_DIR: dataDir('db'), DATABASE_URL: 'postgres://127.0.0.1:1/toolport', PORT: '0' });
    expect(await exitOf(run)).toBe(1);
    expect(run.stderr()).toMatch(/^toolport: .*\n\s+- DATABASE_URL: cannot connect to postgres:\/\/127\.0\.0\.1:1\/toolport/);
    expect(run.stderr()).not.toMatch(STACK_FRAME);
    expect(run.stdout()).not.toContain('ready');
  });

  it('exits 1 naming DATA_DIR when it cannot be written', async () => {
    // Tests run as root, for whom permissions do not stop writes: a path under a regular file does.
    const file = path.join(root, 'not-a-directory');
    writeFileSync(file, '');
    const run = runCli(['start'], { DATA_DIR: path.join(file, 'data'), PORT: '0' });
    expect(await exitOf(run)).toBe(1);
    expect(run.stderr()).toContain(`DATA_DIR: ${path.join(file, 'data')} is not a writable directory`);
    expect(run.stderr()).not.toMatch(STACK_FRAME);
  });

  it('exits 1 naming every malformed variable before touching anything', async () => {
    const run = runCli(['start'], { DATA_DIR: dataDir('malformed'), PORT: 'abc', LOG_LEVEL: 'loud' });
    expect(await exitOf(run)).toBe(1);
    expect(run.stderr()).toMatch(/- PORT: /);
    expect(run.stderr()).toMatch(/- LOG_LEVEL: /);
    expect(run.stderr()).not.toMatch(STACK_FRAME);
    expect(existsSync(dataDir('malformed'))).toBe(false);
  });

  it('migrates a fresh SQLite DATA_DIR with `toolport migrate`, then finds nothing to do', async () => {
    const env = { DATA_DIR: dataDir('migrate') };
    const first = runCli(['migrate'], env);
    expect(await exitOf(first)).toBe(0);
    expect(first.stdout()).toBe(`Applied: ${Object.keys(migrations).join(', ')}\n`);
    const second = runCli(['migrate'], env);
    expect(await exitOf(second)).toBe(0);
    expect(second.stdout()).toBe('Database is up to date\n');
  });

  it('answers an unknown command with usage and exit code 2', async () => {
    const run = runCli(['serve-everything'], { DATA_DIR: dataDir('usage') });
    expect(await exitOf(run)).toBe(2);
    expect(run.stderr()).toContain('unknown command "serve-everything"');
    expect(run.stderr()).toContain('Usage: toolport <command>');
  });
});
