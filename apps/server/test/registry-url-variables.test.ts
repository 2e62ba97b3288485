import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EnvVarDeclaration, InstallStatus } from '@toolport/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from './fake-registries.js';
import { freePort, startEverythingHttp } from './fixtures/upstream-kit.js';
import { connect, type McpClient, textOf } from './gateway/clients.js';
import { addUser, type LiveGateway, startGateway } from './gateway/gateway-harness.js';
import { ADMIN_PASSWORD } from './harness.js';

/**
 * An MCP Registry remote whose URL is a template (`remotes[].variables`, issue 14 item 9b): the details
 * list its variables like environment variables, the install requires the required ones and fills them
 * into the URL, URI-encoded, so that the upstream is called at the real address and never with braces.
 * The registry is the loopback fake; the remote is server-everything behind a front that records paths.
 */
describe('MCP Registry remote URL variables', () => {
  const ENTRY = 'io.github.acme/tenant-remote';
  /** A remote whose host name and port come from variables. */
  const HOST_ENTRY = 'io.github.acme/host-remote';
  let everything: Awaited<ReturnType<typeof startEverythingHttp>>;
  let front: Server;
  const paths: string[] = [];
  let registries: FakeRegistries;
  let gw: LiveGateway;
  let token: string;
  const clients: McpClient[] = [];

  beforeAll(async () => {
    const port = await freePort();
    everything = await startEverythingHttp('streamableHttp', port);
    // Serves server-everything's /mcp under /{region}/t/{tenant}/mcp, as a multi-tenant host would.
    front = http.createServer((req: IncomingMessage, res: ServerResponse) => {
      const raw = req.url ?? '/';
      paths.push(raw);
      if (!/^\/[^/]+\/t\/[^/]+\/mcp(\?|$)/.test(raw)) {
        res.writeHead(404).end();
        return;
      }
      const up = http.request({ host: '127.0.0.1', port, path: '/mcp', method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const frontPort = (front.address() as AddressInfo).port;
    const entry = {
      server: {
        name: ENTRY,
        description: 'A multi-tenant remote server',
        version: '1.0.0',
        remotes: [
          {
            type: 'streamable-http',
            url: `http://127.0.0.1:${frontPort}/{region}/t/{tenant}/mcp`,
            variables: {
              tenant: { description: 'Your tenant identifier', isRequired: true },
              region: { description: 'Deployment region', choices: ['eu', 'us'], default: 'eu' },
            },
          },
        ],
      },
      _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true } },
    };
    const hostEntry = {
      server: {
        name: HOST_ENTRY,
        description: 'A remote server per tenant host',
        version: '1.0.0',
        remotes: [
          {
            type: 'streamable-http',
            url: 'https://{tenant}.mcp.example.com:{port}/v1/{path}',
            variables: {
              tenant: { description: 'Your tenant', isRequired: true },
              port: { description: 'Port', default: '8443' },
              path: { description: 'Path', default: 'mcp' },
            },
          },
        ],
      },
      _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true } },
    };
    registries = await startFakeRegistries({ extraMcpServers: [entry, hostEntry] });
    gw = await startGateway('sqlite', registries.env);
    const login = await gw.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: ADMIN_PASSWORD } });
    token = login.json().data.access_token;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await gw?.close();
    await registries?.close();
    await new Promise<void>((resolve) => {
      if (!front) return resolve();
      front.closeAllConnections();
      front.close(() => resolve());
    });
    await everything?.stop();
  });

  const headers = (lang = 'en') => ({ authorization: `Bearer ${token}`, 'accept-language': lang });
  const install = (values: Record<string, string>, lang = 'en', entry = ENTRY) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/mcp_market/install_or_add_service',
      headers: headers(lang),
      payload: { package_name: entry, package_manager: 'mcp_registry', user_provided_env_vars: values },
    });

  it('lists the URL variables with their descriptions, the required one required, the one with a default not', async () => {
    const res = await gw.app.inject({
      method: 'GET',
      url: `/api/mcp_market/package_details?package_name=${encodeURIComponent(ENTRY)}&package_manager=mcp_registry`,
      headers: headers(),
    });
    expect(res.statusCode, res.body).toBe(200);
    const vars = res.json().data.env_vars as EnvVarDeclaration[];
    expect(vars.find((v) => v.name === 'tenant')).toMatchObject({
      description: 'Your tenant identifier',
      optional: false,
      default_value: '',
    });
    expect(vars.find((v) => v.name === 'region')).toMatchObject({
      description: 'Deployment region (eu, us)',
      optional: true,
      default_value: 'eu',
    });
  });

  it('refuses the install without the required variable, in both languages, and creates nothing', async () => {
    const en = await install({});
    expect(en.statusCode).toBe(400);
    expect(en.json()).toMatchObject({ code: 'required_env_vars', data: { required_env_vars: ['tenant'] } });
    expect(en.json().message).toContain('tenant');
    const zh = await install({ tenant: '  ' }, 'zh-CN');
    expect(zh.statusCode).toBe(400);
    expect(zh.json().message).toMatch(/[\u4e00-\u9fff]/);
    expect(zh.json().message).toContain('tenant');
    const rows = await gw.ctx.db.selectFrom('services').select('id').where('package_name', '=', ENTRY).execute();
    expect(rows).toEqual([]);
  });

  it('fills the values into the URL, URI-encoded, and the upstream is reached there, never with braces', async () => {
    const res = await install({ tenant: 'acme co/eu?x' });
    expect(res.statusCode, res.body).toBe(200);
    const taskId = res.json().data.task_id as string;
    let status: InstallStatus | undefined;
    await vi.waitFor(
      async () => {
        const poll = await gw.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${taskId}`, headers: headers() });
        status = poll.json().data as InstallStatus;
        expect(['completed', 'failed']).toContain(status.status);
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(status?.status, status?.error_message).toBe('completed');

    const row = await gw.ctx.db
      .selectFrom('services')
      .select(['name', 'command'])
      .where('package_name', '=', ENTRY)
      .executeTakeFirstOrThrow();
    expect(row.command).toMatch(/\/eu\/t\/acme%20co%2Feu%3Fx\/mcp$/);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith('/eu/t/acme%20co%2Feu%3Fx/mcp'))).toBe(true);
    expect(paths.some((p) => /%7B|%7D|[{}]/i.test(p))).toBe(false);

    const { key } = await addUser(gw.ctx, 'tenant_user');
    const client = await connect(gw.url, row.name, key, { sdk: 'v1', wire: 'http' });
    clients.push(client);
    expect(textOf(await client.callTool('echo', { message: 'tenant' }))).toBe('Echo: tenant');
  });

  it('refuses a value that cannot go where its variable sits with 400 naming the variable, in both languages, and creates nothing', async () => {
    for (const tenant of ['acme/evil', 'evil.com/x', 'user@evil', 'acme:1', 'acme corp', 'a\tb']) {
      const en = await install({ tenant }, 'en', HOST_ENTRY);
      expect(en.statusCode, `${tenant}: ${en.body}`).toBe(400);
      expect(en.json()).toMatchObject({ code: 'url_variable_invalid', data: { variables: ['tenant'] } });
      expect(en.json().message).toBe(
        "The value of tenant goes into the server's host name, so it may hold only letters, digits, dots and hyphens (no /, @, : or spaces)",
      );
    }
    const zh = await install({ tenant: 'acme/evil' }, 'zh-CN', HOST_ENTRY);
    expect(zh.statusCode).toBe(400);
    expect(zh.json().message).toBe('tenant 的值会写入服务器的主机名，只能包含字母、数字、点和连字符（不能有 /、@、: 或空格）');
    for (const port of ['abc', '0', '70000', '443/x']) {
      const res = await install({ tenant: 'acme', port }, 'en', HOST_ENTRY);
      expect(res.statusCode, `${port}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ code: 'url_variable_invalid', data: { variables: ['port'] } });
      expect(res.json().message).toContain('The value of port goes into the server');
    }
    const zhPort = await install({ tenant: 'acme', port: 'abc' }, 'zh-CN', HOST_ENTRY);
    expect(zhPort.json().message).toBe('port 的值会写入服务器的端口，必须是 1 到 65535 之间的数字');
    const rows = await gw.ctx.db.selectFrom('services').select('id').where('package_name', '=', HOST_ENTRY).execute();
    expect(rows).toEqual([]);
  });
});
