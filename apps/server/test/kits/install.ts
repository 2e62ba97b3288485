import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { InstallStatus } from '@toolport/contract';
import type { Selectable } from 'kysely';
import { expect, vi } from 'vitest';
import type { BuildOptions } from '../../src/app.js';
import type { Engine } from '../../src/db/db.js';
import type { ServicesTable } from '../../src/db/schema.js';
import { type FakeRegistries, startFakeRegistries } from '../fake-registries.js';
import { bearer, createTestApp, type TestApp } from '../harness.js';

/**
 * Test helpers of the install suites: a local npm registry serving packages built by the test (the
 * real wire format: a packument per package, tarballs made by `npm pack`), a wheel built by the
 * test for the fake PyPI index, and waiting for install tasks.
 */

/** The dependency-free stdio MCP server of the gateway tests (tools echo, sleep …), packaged as an npm bin. */
export const FIXTURE_SERVER = fileURLToPath(new URL('../fixtures/fixture-mcp-server.mjs', import.meta.url));

export interface FakeNpmPackage {
  name: string;
  version: string;
  /** Files of the package, by path inside it; package.json is written from the other fields. */
  files: Record<string, string>;
  bin?: Record<string, string>;
  scripts?: Record<string, string>;
}

export interface FakeNpm {
  /** The registry URL (with a trailing slash), for NPM_REGISTRY_URL. */
  url: string;
  /** Paths asked for, in order. */
  requests: string[];
  /** Publishes one more version (or package): it becomes the package's `latest`. */
  publish(pkg: FakeNpmPackage): void;
  close(): Promise<void>;
}

/** Packs every package with `npm pack` and serves packuments and tarballs as registry.npmjs.org does. */
export async function startFakeNpm(packages: FakeNpmPackage[]): Promise<FakeNpm> {
  const work = mkdtempSync(path.join(tmpdir(), 'toolport-fake-npm-'));
  const tarballs = new Map<string, Buffer>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/');
    requests.push(url);
    const tarball = tarballs.get(url);
    if (tarball) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(tarball);
      return;
    }
    const doc = packuments.get(url.slice(1));
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc ?? { error: 'Not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const packuments = new Map<
    string,
    { 'dist-tags': { latest: string }; versions: Record<string, unknown>; time: Record<string, string> }
  >();
  const publish = (pkg: FakeNpmPackage) => {
    const dir = path.join(work, `${pkg.name.replace('/', '__')}-${pkg.version}`);
    mkdirSync(dir, { recursive: true });
    const manifest = {
      name: pkg.name,
      version: pkg.version,
      description: `${pkg.name} (built by a test)`,
      bin: pkg.bin,
      scripts: pkg.scripts,
    };
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
    for (const [file, text] of Object.entries(pkg.files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text, { mode: 0o755 });
    }
    const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: dir, encoding: 'utf8' });
    const filename = (JSON.parse(out) as { filename: string }[])[0]?.filename ?? '';
    const data = readFileSync(path.join(work, filename));
    const tarPath = `/${pkg.name}/-/${path.basename(filename)}`;
    tarballs.set(tarPath, data);
    const version = {
      ...manifest,
      _id: `${pkg.name}@${pkg.version}`,
      dist: {
        tarball: `${base}${tarPath}`,
        shasum: createHash('sha1').update(data).digest('hex'),
        integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
      },
    };
    const known = packuments.get(pkg.name);
    if (known) {
      known.versions[pkg.version] = version;
      known['dist-tags'].latest = pkg.version;
      known.time[pkg.version] = new Date().toISOString();
      return;
    }
    packuments.set(pkg.name, {
      _id: pkg.name,
      name: pkg.name,
      description: manifest.description,
      'dist-tags': { latest: pkg.version },
      versions: { [pkg.version]: version },
      time: { created: '2026-01-01T00:00:00.000Z', modified: '2026-01-01T00:00:00.000Z', [pkg.version]: '2026-01-01T00:00:00.000Z' },
      maintainers: [{ name: 'tests' }],
    } as never);
  };
  for (const pkg of packages) publish(pkg);
  return {
    url: `${base}/`,
    requests,
    publish,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        rmSync(work, { recursive: true, force: true });
      }),
  };
}

/** An npm package whose bin is the fixture MCP server. */
export const echoPackage = (name: string, version = '1.0.0'): FakeNpmPackage => ({
  name,
  version,
  bin: { [name.split('/').pop() ?? name]: 'server.mjs' },
  files: { 'server.mjs': readFileSync(FIXTURE_SERVER, 'utf8') },
});

/** Python source of a tiny stdio MCP server: initialize, tools/list, tools/call (add_note), ping. */
const NOTES_SERVER = `import json, os, sys

def answer(rid, result=None, error=None):
    message = {"jsonrpc": "2.0", "id": rid}
    message["error" if error else "result"] = error or result
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "id" not in message or "method" not in message:
            continue
        method, rid = message["method"], message["id"]
        if method == "initialize":
            version = message.get("params", {}).get("protocolVersion", "2025-06-18")
            answer(rid, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "acme-notes-mcp", "version": "0.3.1"}})
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
            answer(rid, {"tools": [{"name": "add_note", "description": "Store a note", "inputSchema": schema}]})
        elif method == "tools/call":
            text = message.get("params", {}).get("arguments", {}).get("text", "")
            token = "token set" if os.environ.get("ACME_NOTES_TOKEN") else "no token"
            answer(rid, {"content": [{"type": "text", "text": "noted: %s (%s, dir %s)" % (text, token, os.environ.get("ACME_NOTES_DIR", ""))}]})
        elif method == "ping":
            answer(rid, {})
        else:
            answer(rid, error={"code": -32601, "message": "Method not found"})
`;

/** Writes a wheel from files with METADATA, WHEEL, entry_points.txt and a RECORD of their hashes (zipfile, no build tools). */
const WHEEL_BUILDER = `import base64, hashlib, json, sys, zipfile
out, files = sys.argv[1], json.loads(sys.stdin.read())
record = []
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    info = [n for n in files if n.endswith(".dist-info/METADATA")][0].rsplit("/", 1)[0]
    record.append(info + "/RECORD,,")
    z.writestr(info + "/RECORD", "\\n".join(record) + "\\n")
`;

/** Builds `acme_notes_mcp-0.3.1-py3-none-any.whl` (no dependencies) into `dir`; returns its path. */
export function buildNotesWheel(dir: string): string {
  const info = 'acme_notes_mcp-0.3.1.dist-info';
  const files = {
    'acme_notes_mcp/__init__.py': NOTES_SERVER,
    [`${info}/METADATA`]: 'Metadata-Version: 2.1\nName: acme-notes-mcp\nVersion: 0.3.1\nSummary: Notes for MCP clients\n',
    [`${info}/WHEEL`]: 'Wheel-Version: 1.0\nGenerator: toolport-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    [`${info}/entry_points.txt`]: '[console_scripts]\nacme-notes-mcp = acme_notes_mcp:main\n',
  };
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'acme_notes_mcp-0.3.1-py3-none-any.whl');
  execFileSync('python3', ['-c', WHEEL_BUILDER, out], { input: JSON.stringify(files) });
  return out;
}

export interface InstallKit {
  fake: FakeRegistries;
  /** The local npm registry (NPM_REGISTRY_URL), serving the suite's packages. */
  npm: FakeNpm;
  /** The app, listening on 127.0.0.1 (any free port) for the real MCP clients of `callToolThroughGateway`. */
  t: TestApp;
  /** The super admin's access token. */
  token: string;
  /** The services row of that name, if there is one. */
  serviceNamed(name: string): Promise<Selectable<ServicesTable> | undefined>;
  close(): Promise<void>;
}

/**
 * What every marketplace install suite starts from: the fake registries (MCP Registry, PyPI with the wheels in
 * `pypiFilesDir`, GitHub), a local npm registry serving the packages in `npm`, and the real app pointed at them.
 * `gateway` shortens the gateway's timings for a suite that waits for one (a server that never answers initialize).
 */
export async function startInstallKit(
  engine: Engine,
  opts: { npm?: FakeNpmPackage[]; pypiFilesDir?: string } & Pick<BuildOptions, 'gateway'> = {},
): Promise<InstallKit> {
  const fake = await startFakeRegistries(opts.pypiFilesDir ? { pypiFilesDir: opts.pypiFilesDir } : {});
  // What has started so far, stopped in reverse order (also when a later step fails).
  const started: { npm?: FakeNpm; t?: TestApp } = {};
  const close = async () => {
    await started.t?.close();
    await started.npm?.close();
    await fake.close();
  };
  try {
    const npm = await startFakeNpm(opts.npm ?? []);
    started.npm = npm;
    const t = await createTestApp(engine, { ...fake.env, NPM_REGISTRY_URL: npm.url }, { gateway: opts.gateway });
    started.t = t;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    return {
      fake,
      npm,
      t,
      token: await t.rootToken(),
      serviceNamed: (name) => t.ctx.db.selectFrom('services').selectAll().where('name', '=', name).executeTakeFirst(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Polls install_status until the task is finished, as the console does; returns its last status. */
export async function waitForTask(t: TestApp, token: string, taskId: string, timeout = 240_000): Promise<InstallStatus> {
  let last: InstallStatus | undefined;
  await vi.waitFor(
    async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${taskId}`, headers: bearer(token) });
      expect(res.statusCode, res.body).toBe(200);
      last = res.json().data as InstallStatus;
      expect(['completed', 'failed']).toContain(last.status);
    },
    { timeout, interval: 250 },
  );
  return last as InstallStatus;
}

/**
 * A real MCP client (the SDK's) calling one tool through the gateway at /proxy/<service>/mcp, with
 * the API key of the user whose console token is given. The app must be listening.
 */
export async function callToolThroughGateway(t: TestApp, token: string, service: string, tool: string, args: Record<string, unknown>) {
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the app is not listening');
  const self = await t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(token) });
  const apiKey = self.json().data.token as string;
  const client = new Client({ name: 'toolport-install-test', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/proxy/${service}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
  });
  await client.connect(transport);
  try {
    return (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
  } finally {
    await client.close();
  }
}

/** Text of a tool result's first content item. */
export const firstText = (result: CallToolResult): string => {
  const item = result.content[0];
  return item?.type === 'text' ? item.text : '';
};

/** Live processes (not zombies) whose command line mentions `needle`: what a failed install must not leave. */
export function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (cmdline.includes(needle) && state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Every process below `root` (its children, theirs …), read from /proc: pid and command line. */
export function descendantsOf(root: number): { pid: number; cmdline: string }[] {
  const children = new Map<number, number[]>();
  const lines = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      const parent = Number(fields[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
      lines.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim());
    } catch {
      // Gone while we looked.
    }
  }
  const found: { pid: number; cmdline: string }[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push({ pid: child, cmdline: lines.get(child) ?? '' });
      walk(child);
    }
  };
  walk(root);
  return found;
}

/** A package manager's process among `processes`: `npm exec`, npx, uv/uvx, or a shell running one. */
export const isPackageManager = (cmdline: string): boolean =>
  /(^|[\s/])(npm|npx|npm-cli\.js|npx-cli\.js|uv|uvx)(\s|$)/.test(cmdline) || /^(\/bin\/)?sh -c/.test(cmdline);
