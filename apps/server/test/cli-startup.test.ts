import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.js';
import { ensureBuiltCli, exitOf, freePort, runCli, waitUntilReady } from './built-cli.js';

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

  it('exits 1 with one line naming SECRET_KEY and `toolport rotate-secret` when the key does not decrypt what is stored', async () => {
    const dir = dataDir('wrong-key');
    const KEY = 'the-key-these-secrets-were-stored-under-0123';
    const start = async (env: Record<string, string>) => {
      const port = await freePort();
      const run = runCli(['start'], { DATA_DIR: dir, PORT: String(port), ...env });
      await waitUntilReady(run, port);
      run.child.kill('SIGTERM');
      expect(await exitOf(run)).toBe(0);
    };
    // Stored under KEY by an import into a fresh DATA_DIR: the super admin's API key copy and a service's variable.
    const file = path.join(root, 'one-service.json');
    // It exits at once: its first check fails fast, which is all the import waits for.
    const server = { command: process.execPath, args: ['-e', 'process.exit(3)'], env: { TOKEN: 'stored-under-key' } };
    writeFileSync(file, JSON.stringify({ mcpServers: { keyed: server } }));
    expect(await exitOf(runCli(['import', file], { DATA_DIR: dir, SECRET_KEY: KEY }))).toBe(0);

    const keyFile = path.join(dir, 'secret.key');
    for (const [env, head] of [
      [{ SECRET_KEY: 'another-key-than-the-one-they-were-stored-under' }, 'SECRET_KEY does not decrypt'],
      [{}, `SECRET_KEY is not set and ${keyFile} does not exist, so no key decrypts`],
    ] as const) {
      const run = runCli(['start'], { DATA_DIR: dir, PORT: '0', ...env });
      expect(await exitOf(run)).toBe(1);
      expect(run.stderr().trimEnd().split('\n')).toEqual([
        `toolport: ${head} the secrets stored in ${path.join(dir, 'toolport.db')} (users.api_key_enc (id 1) is one): set SECRET_KEY to the key they were stored under; to move them to a new key, start with the old one and run \`toolport rotate-secret\` (docs/operations.md, "Secrets and rotation")`,
      ]);
      expect(run.stderr()).not.toContain('Unsupported state');
      expect(run.stdout()).not.toContain('ready');
    }
    // The key file that start generated is not left behind to be taken for the installation's.
    expect(existsSync(keyFile)).toBe(false);
    // The right key starts as before.
    await start({ SECRET_KEY: KEY });
  }, 120_000);

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
