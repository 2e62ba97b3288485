import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoPackage, type FakeRegistries, startFakeRegistries } from './fake-registries.js';

const run = promisify(execFile);

/** The real npm installing one package from a fake registry into a fresh project in `dir`, with its own cache. */
async function npmInstall(dir: string, registry: string, spec: string): Promise<void> {
  writeFileSync(path.join(dir, 'package.json'), '{"private": true}');
  const args = ['install', '--prefix', dir, '--no-audit', '--no-fund', '--cache', path.join(dir, '.cache'), '--registry', registry, spec];
  await run('npm', args, { cwd: dir, timeout: 120_000 });
}

/** Starts an installed stdio server, sends JSON-RPC messages one per line and collects the answers by id. */
async function talkTo(
  command: string,
  args: string[],
  env: Record<string, string>,
  requests: { id?: number; [field: string]: unknown }[],
): Promise<Map<number, unknown>> {
  const expected = requests.filter((r) => r.id !== undefined).length;
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const answers = new Map<number, unknown>();
  const done = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { id: number };
      answers.set(message.id, message);
      if (answers.size === expected) resolve();
    });
  });
  for (const request of requests) child.stdin.write(`${JSON.stringify(request)}\n`);
  await done;
  child.kill();
  return answers;
}

/** The fake must keep speaking the wire formats the install step and the browser suites rely on. */
describe('fake registries', () => {
  let fake: FakeRegistries;
  let files: string;
  const wheel = Buffer.from('not really a zip, but bytes the index must serve unchanged');

  beforeAll(async () => {
    files = mkdtempSync(path.join(tmpdir(), 'fake-pypi-'));
    writeFileSync(path.join(files, 'acme_notes_mcp-0.3.1-py3-none-any.whl'), wheel);
    writeFileSync(path.join(files, 'other_pkg-1.0.tar.gz'), 'sdist');
    fake = await startFakeRegistries({ pypiFilesDir: files });
  });
  afterAll(async () => {
    await fake?.close();
    rmSync(files, { recursive: true, force: true });
  });

  it('serves a PEP 503 simple index of the given files, with sha256 fragments, under normalised names', async () => {
    const root = await (await fetch(`${fake.urls.pypiIndex}/`)).text();
    expect(root).toContain('<a href="acme-notes-mcp/">acme-notes-mcp</a>');
    expect(root).toContain('<a href="other-pkg/">other-pkg</a>');

    const page = await fetch(`${fake.urls.pypiIndex}/Acme_Notes.MCP/`);
    expect(page.status).toBe(200);
    const sha = createHash('sha256').update(wheel).digest('hex');
    const href = /href="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    expect(href).toBe(`../../files/acme_notes_mcp-0.3.1-py3-none-any.whl#sha256=${sha}`);

    const file = await fetch(new URL(href, `${fake.urls.pypiIndex}/acme-notes-mcp/`));
    expect(Buffer.from(await file.arrayBuffer())).toEqual(wheel);
    expect((await fetch(`${fake.urls.pypiIndex}/nothing-here/`)).status).toBe(404);
  });

  it('gives the env that points a server at it', () => {
    expect(Object.keys(fake.env).sort()).toEqual([
      'GITHUB_API_URL',
      'MCP_REGISTRY_URL',
      'NPM_DOWNLOADS_URL',
      'NPM_REGISTRY_URL',
      'PYPI_INDEX_URL',
      'PYPI_JSON_URL',
    ]);
  });

  it('pages MCP Registry lists with opaque cursors', async () => {
    type Page = { servers: { server: { name: string } }[]; metadata: { nextCursor?: string } };
    const first = (await (await fetch(`${fake.urls.mcpRegistry}/v0.1/servers?limit=2`)).json()) as Page;
    expect(first.servers).toHaveLength(2);
    const second = (await (
      await fetch(`${fake.urls.mcpRegistry}/v0.1/servers?limit=2&cursor=${first.metadata.nextCursor}`)
    ).json()) as Page;
    expect(second.servers[0]?.server.name).not.toBe(first.servers[0]?.server.name);
  });

  it('fails one registry on demand while the others answer', async () => {
    fake.fail('pypi', 'error');
    expect((await fetch(`${fake.urls.pypiJson}/mcp-server-fetch/json`)).status).toBe(500);
    expect((await fetch(`${fake.urls.npm}acme-weather-mcp`)).status).toBe(200);
    fake.reset();
    expect((await fetch(`${fake.urls.pypiJson}/mcp-server-fetch/json`)).status).toBe(200);
  });

  it('serves the fixture package as a real tarball that npm installs offline, and the installed server speaks MCP', async () => {
    const doc = (await (await fetch(`${fake.urls.npm}acme-echo-mcp`)).json()) as {
      'dist-tags': { latest: string };
      versions: Record<string, { dist: { tarball: string; shasum: string; integrity: string } }>;
      readme: string;
    };
    const dist = doc.versions[doc['dist-tags'].latest]?.dist;
    expect(dist?.tarball).toBe(`${fake.urls.npm}acme-echo-mcp/-/acme-echo-mcp-1.0.0.tgz`);
    expect(doc.readme).toContain('ACME_ECHO_TOKEN');
    const tarball = Buffer.from(await (await fetch(dist?.tarball ?? '')).arrayBuffer());
    expect(createHash('sha1').update(tarball).digest('hex')).toBe(dist?.shasum);
    expect(`sha512-${createHash('sha512').update(tarball).digest('base64')}`).toBe(dist?.integrity);

    const search = (await (await fetch(`${fake.urls.npm}-/v1/search?text=echo`)).json()) as { objects: { package: { name: string } }[] };
    expect(search.objects.map((o) => o.package.name)).toEqual(['acme-echo-mcp']);

    const dir = mkdtempSync(path.join(tmpdir(), 'fake-npm-install-'));
    try {
      await npmInstall(dir, fake.urls.npm, 'acme-echo-mcp');
      const pkgDir = path.join(dir, 'node_modules', 'acme-echo-mcp');
      expect(JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version).toBe('1.0.0');
      const answers = await talkTo(process.execPath, [path.join(pkgDir, 'server.mjs')], { ACME_ECHO_TOKEN: 't0ken' }, [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        { jsonrpc: '2.0', id: 5, method: 'nope' },
      ]);
      expect(answers.get(1)).toMatchObject({ result: { protocolVersion: '2025-06-18', serverInfo: { name: 'acme-echo-mcp' } } });
      expect((answers.get(2) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name)).toEqual(['echo', 'whoami']);
      expect(answers.get(3)).toMatchObject({ result: { content: [{ type: 'text', text: 'echo: hi' }] } });
      expect(answers.get(4)).toMatchObject({ result: { content: [{ type: 'text', text: 'token set' }] } });
      expect(answers.get(5)).toMatchObject({ error: { code: -32601 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);

  it('serves the one echo server under another name and version when asked, installable under them, without the readme', async () => {
    const alias = await startFakeRegistries({
      extraNpmPackages: [echoPackage('@acme/echo-alias', '2.3.4', { bin: 'echo-alias', description: 'The echo server under a scope' })],
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'fake-npm-alias-'));
    try {
      const doc = (await (await fetch(`${alias.urls.npm}@acme%2Fecho-alias`)).json()) as {
        'dist-tags': { latest: string };
        versions: Record<string, { bin: Record<string, string>; dist: { tarball: string } }>;
        readme: string;
      };
      expect(doc['dist-tags'].latest).toBe('2.3.4');
      expect(doc.versions['2.3.4']?.dist.tarball).toBe(`${alias.urls.npm}@acme/echo-alias/-/echo-alias-2.3.4.tgz`);
      expect(doc.versions['2.3.4']?.bin).toEqual({ 'echo-alias': 'server.mjs' });
      expect(doc.readme).toBe('');
      const search = (await (await fetch(`${alias.urls.npm}-/v1/search?text=echo`)).json()) as { objects: { package: { name: string } }[] };
      expect(search.objects.map((o) => o.package.name)).toEqual(['acme-echo-mcp', '@acme/echo-alias']);

      await npmInstall(dir, alias.urls.npm, '@acme/echo-alias@2.3.4');
      const pkgDir = path.join(dir, 'node_modules', '@acme', 'echo-alias');
      const manifest = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { name: string; version: string };
      expect([manifest.name, manifest.version]).toEqual(['@acme/echo-alias', '2.3.4']);
      // The same source, byte for byte; the readme (which asks for ACME_ECHO_TOKEN) stays with acme-echo-mcp.
      const source = new URL('./fixtures/registries/npm/tarballs/acme-echo-mcp/server.mjs', import.meta.url);
      expect(readFileSync(path.join(pkgDir, 'server.mjs'), 'utf8')).toBe(readFileSync(source, 'utf8'));
      expect(existsSync(path.join(pkgDir, 'README.md'))).toBe(false);
      const answers = await talkTo(path.join(dir, 'node_modules', '.bin', 'echo-alias'), [], {}, [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'alias' } } },
      ]);
      expect(answers.get(2)).toMatchObject({ result: { content: [{ type: 'text', text: 'echo: alias' }] } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await alias.close();
    }
  }, 150_000);
});
