import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BatchProgressEvent } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { SseReader } from '../../../../test/gateway/raw-http.js';
import { bearer, createTestApp, engines, type TestApp } from '../../../../test/harness.js';
import { buildNotesWheel, echoPackage, type FakeNpm, FIXTURE_SERVER, startFakeNpm } from '../../../../test/kits/install.js';
import { serviceRow } from '../../../../test/kits/services.js';
import { findExecutable } from '../installers/path-lookup.js';

type Item = Extract<BatchProgressEvent, { name: string }>;

/** 20 servers as an admin would paste them: 10 to import, 4 already there, 6 that cannot work. */
function twentyServers(): Record<string, unknown> {
  const fixture = { command: 'node', args: [FIXTURE_SERVER] };
  return {
    mcpServers: {
      'echo-npm': { command: 'npx', args: ['-y', 'acme-echo-mcp@1.0.0'] },
      'notes-uvx': { command: 'uvx', args: ['acme-notes-mcp==0.3.1'], env: { ACME_NOTES_TOKEN: 'batch-token-1234' } },
      'local-a': fixture,
      'local-b': { ...fixture, env: { FIXTURE_MODE: '' } },
      'local-c': { command: findExecutable('node'), args: [FIXTURE_SERVER] },
      'remote-1': { url: 'http://127.0.0.1:9/mcp' },
      'remote-2': { url: 'http://127.0.0.1:9/sse' },
      'remote-3': { type: 'http', url: 'http://127.0.0.1:9/three', headers: { Authorization: 'Bearer remote-secret' } },
      'remote-4': { type: 'streamableHttp', url: 'http://127.0.0.1:9/four' },
      'cherry-id-5': { name: 'remote-5', type: 'sse', baseUrl: 'http://127.0.0.1:9/five/sse' },
      'existing-1': fixture,
      'existing-2': { url: 'http://127.0.0.1:9/existing' },
      'existing-3': { command: 'uvx', args: ['acme-notes-mcp'] },
      'cherry-dupe': { name: 'local-a', command: 'node', args: [FIXTURE_SERVER] },
      'broken-npm': { command: 'npx', args: ['-y', 'acme-broken-install'] },
      'missing-cmd': { command: 'definitely-not-a-command-xyz', args: [] },
      'vscode-input': { type: 'stdio', command: 'npx', args: ['-y', 'acme-echo-mcp'], env: { KEY: `\${input:key}` } },
      'cherry-builtin': { name: '@cherry/fetch', type: 'inMemory', isActive: true },
      'no-command': { env: { A: '1' } },
      'bad-url': { type: 'sse', url: 'not a url' },
    },
  };
}

describe.each(engines)('batch import on %s', (engine) => {
  let fake: FakeRegistries;
  let npm: FakeNpm;
  let t: TestApp;
  let token: string;
  let base: string;
  let wheels: string;

  beforeAll(async () => {
    wheels = mkdtempSync(path.join(tmpdir(), 'toolport-wheels-'));
    buildNotesWheel(wheels);
    fake = await startFakeRegistries({ pypiFilesDir: wheels });
    npm = await startFakeNpm([
      echoPackage('acme-echo-mcp'),
      {
        name: 'acme-broken-install',
        version: '1.0.0',
        bin: { 'acme-broken-install': 'server.mjs' },
        files: { 'server.mjs': '' },
        scripts: { postinstall: 'node -e "process.exit(3)"' },
      },
    ]);
    t = await createTestApp(engine, { ...fake.env, NPM_REGISTRY_URL: npm.url });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    token = await t.rootToken();
    for (const name of ['existing-1', 'existing-2', 'existing-3'])
      await t.ctx.db
        .insertInto('services')
        .values(serviceRow({ name, enabled: 0 }))
        .execute();
  });
  afterAll(async () => {
    await t?.close();
    await npm?.close();
    await fake?.close();
    rmSync(wheels, { recursive: true, force: true });
  });

  const progressUrl = (taskId: string, query = `?token=${encodeURIComponent(token)}`) =>
    `${base}/api/mcp_market/batch-import/progress/${taskId}${query}`;

  /** Reads a whole event stream (it ends after `done`). */
  const readAll = async (taskId: string): Promise<BatchProgressEvent[]> => {
    const res = await fetch(progressUrl(taskId));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as BatchProgressEvent);
  };

  it('imports a 20-server configuration, followed live over the event stream, and a late subscriber gets it all', async () => {
    const start = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      headers: bearer(token),
      payload: twentyServers(),
    });
    expect(start.statusCode, start.body).toBe(200);
    const { task_id: taskId, total } = start.json().data;
    expect(total).toBe(20);

    // Live: the stream is opened at once and followed event by event until `done`.
    const res = await fetch(progressUrl(taskId));
    expect(res.status).toBe(200);
    const reader = SseReader.of(res);
    const live: BatchProgressEvent[] = [];
    for (;;) {
      const event = JSON.parse((await reader.next()).data) as BatchProgressEvent;
      live.push(event);
      if (event.status === 'done') break;
    }
    await reader.cancel();

    const items = live.filter((e): e is Item => 'name' in e);
    const byName = Object.fromEntries(items.map((i) => [i.name, i]));
    expect(items.map((i) => i.name)).toEqual([
      'echo-npm',
      'notes-uvx',
      'local-a',
      'local-b',
      'local-c',
      'remote-1',
      'remote-2',
      'remote-3',
      'remote-4',
      'remote-5',
      'existing-1',
      'existing-2',
      'existing-3',
      'local-a',
      'broken-npm',
      'missing-cmd',
      'vscode-input',
      'cherry-builtin',
      'no-command',
      'bad-url',
    ]);
    expect(live.at(-1)).toEqual({ status: 'done', summary: { success: 10, skipped: 4, failed: 6 } });
    expect(byName['echo-npm']).toMatchObject({
      status: 'success',
      message: expect.stringMatching(/^Installed acme-echo-mcp@1\.0\.0 \(\d+ tools\)$/),
    });
    expect(byName['notes-uvx']).toMatchObject({ status: 'success', message: expect.stringContaining('Installed acme-notes-mcp@0.3.1') });
    expect(byName['existing-2']).toEqual({
      name: 'existing-2',
      status: 'skipped',
      message: 'Skipped: a service named existing-2 already exists',
    });
    expect(items.filter((i) => i.name === 'local-a').map((i) => i.status)).toEqual(['success', 'skipped']);
    expect(byName['broken-npm']).toMatchObject({ status: 'failed', message: expect.stringContaining('npm exited with code') });
    expect(byName['missing-cmd']?.message).toBe('Failed: the command definitely-not-a-command-xyz was not found on this server');
    expect(byName['vscode-input']?.message).toContain(`\${input:key}`);
    expect(byName['cherry-builtin']?.status).toBe('failed');
    expect(byName['bad-url']?.message).toBe('Failed: Please enter a valid URL');

    // Late: the task is finished; a new subscriber receives the same history, then the stream ends.
    expect(await readAll(taskId)).toEqual(live);
    // An EventSource reconnecting after the end is told to stop.
    const after = await fetch(progressUrl(taskId), { headers: { 'last-event-id': '21' } });
    expect(after.status).toBe(204);
  }, 240_000);

  it('created the services it reported: packages pinned into DATA_DIR/packages, commands made absolute, URLs as remote services', async () => {
    const row = (name: string) => t.ctx.db.selectFrom('services').selectAll().where('name', '=', name).executeTakeFirstOrThrow();
    const echo = await row('echo-npm');
    expect(echo).toMatchObject({
      enabled: 1,
      command: 'node',
      install_dir: 'packages/npm/echo-npm',
      version: '1.0.0',
    });
    const notes = await row('notes-uvx');
    expect(notes).toMatchObject({
      package_manager: 'uv',
      command: './venv/bin/python',
      install_dir: 'packages/pypi/notes-uvx',
      args_json: JSON.stringify(['./venv/bin/acme-notes-mcp']),
    });
    expect(t.ctx.secrets.decryptJson(notes.env_enc, {})).toEqual({ ACME_NOTES_TOKEN: 'batch-token-1234' });
    expect(await row('local-a')).toMatchObject({
      type: 'stdio',
      command: findExecutable('node'),
      args_json: JSON.stringify([FIXTURE_SERVER]),
    });
    expect(await row('remote-2')).toMatchObject({ type: 'sse', command: 'http://127.0.0.1:9/sse' });
    const three = await row('remote-3');
    expect(three.type).toBe('streamableHttp');
    expect(t.ctx.secrets.decryptJson(three.headers_enc, {})).toEqual({ Authorization: 'Bearer remote-secret' });
    expect(await row('remote-5')).toMatchObject({ type: 'sse', display_name: 'remote-5' });
    const names = (await t.ctx.db.selectFrom('services').select('name').execute()).map((r) => r.name);
    expect(names).not.toContain('broken-npm');
    expect(names).toHaveLength(13);
  });

  it('guards the stream: an admin token is required, in the query or the header, for a batch task that exists', async () => {
    const user = await t.createUser({ role: 1 });
    const start = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      // The console posts the text as typed; a JSON string holding the document is read the same way.
      payload: JSON.stringify(JSON.stringify({ servers: { 'existing-1': { command: 'npx', args: ['x'] } } })),
    });
    expect(start.statusCode, start.body).toBe(200);
    const taskId = start.json().data.task_id;
    expect((await fetch(progressUrl(taskId, ''))).status).toBe(401);
    expect((await fetch(progressUrl(taskId, '?token=forged'))).status).toBe(401);
    expect((await fetch(progressUrl(taskId, `?token=${user.token}`))).status).toBe(403);
    expect((await fetch(progressUrl('no-such-task'))).status).toBe(404);
    const viaHeader = await fetch(progressUrl(taskId, ''), { headers: bearer(token) });
    expect(viaHeader.status).toBe(200);
    expect(await viaHeader.text()).toContain('"status":"done"');
  });

  it('refuses documents that are not configurations with a message saying so', async () => {
    const post = (payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/mcp_market/batch-import',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
    const notConfig = await post({ hello: 'world' });
    expect(notConfig.statusCode).toBe(400);
    expect(notConfig.json().message).toContain('not an MCP configuration');
    expect((await post({ mcpServers: {} })).json().message).toBe('The configuration lists no servers');
    expect((await post('{not json')).json().message).toBe('The request body is not valid JSON');
    // Sent as text, as the console sends it, a server name given twice is named rather than half-imported.
    const twice = await post('{"mcpServers":{"dup-one":{"command":"npx"},"dup-one":{"command":"uvx"}}}');
    expect(twice.statusCode).toBe(400);
    expect(twice.json().message).toBe('The configuration names the server "dup-one" twice; keep one entry under each name');
    const zh = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      headers: { ...bearer(token), 'content-type': 'application/json', 'accept-language': 'zh-CN' },
      payload: JSON.stringify('{"mcpServers":{"dup-one":{"command":"npx"},"dup-one":{"command":"uvx"}}}'),
    });
    expect(zh.json().message).toBe('该配置两次使用了服务名“dup-one”；每个名称只保留一个条目');
    expect(await t.ctx.db.selectFrom('services').select('name').where('name', '=', 'dup-one').execute()).toEqual([]);
  });
});
