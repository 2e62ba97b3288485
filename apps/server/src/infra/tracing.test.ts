import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedSpan, type FakeOtlp, startFakeOtlp } from '../../test/fake-otlp.js';
import { connect, type McpClient, textOf } from '../../test/gateway/clients.js';
import { addService, addUser, type LiveGateway, startGateway } from '../../test/gateway/gateway-harness.js';
import { engines } from '../../test/harness.js';
import { ConfigError, loadConfig } from '../config.js';
import { tracesUrl } from './tracing.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

describe('tracing configuration', () => {
  it('is off by default and names the service toolport', () => {
    expect(loadConfig({}).tracing).toEqual({ otlpEndpoint: undefined, serviceName: 'toolport' });
  });

  it('reads OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME, and sends to <endpoint>/v1/traces', () => {
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'toolport-eu' });
    expect(config.tracing).toEqual({ otlpEndpoint: 'http://collector:4318/', serviceName: 'toolport-eu' });
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otel.example.com/base')).toBe('https://otel.example.com/base/v1/traces');
  });

  it('refuses an endpoint that is not an http(s) URL, naming the variable', () => {
    for (const bad of ['collector:4318', 'grpc://collector:4317', 'not a url']) {
      expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: bad }), bad).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT: must be a URL/);
    }
    expect(() => loadConfig({ OTEL_SERVICE_NAME: ' ' })).toThrow(/OTEL_SERVICE_NAME/);
  });
});

describe.each(engines)('OpenTelemetry tracing on %s', (engine) => {
  let collector: FakeOtlp;
  let gw: LiveGateway;
  let key: string;
  const open: McpClient[] = [];

  beforeAll(async () => {
    collector = await startFakeOtlp();
    gw = await startGateway(engine, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'toolport-under-test' });
    key = (await addUser(gw.ctx, 'alice')).key;
    await addService(gw.ctx, { name: 'everything' });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    await collector?.close();
  });

  const spansNamed = (name: string) => collector.spans.filter((s) => s.name === name);
  const childOf = (parent: CollectedSpan) => collector.spans.filter((s) => s.parentSpanId === parent.spanId);

  it('exports a span per proxied MCP request with the upstream call as its child', async () => {
    const c = await connect(gw.url, 'everything', key, { sdk: 'v1', wire: 'http' });
    open.push(c);
    expect(textOf(await c.callTool('echo', { message: 'traced' }))).toBe('Echo: traced');
    await gw.ctx.tracing.flush();

    expect(collector.requests.every((r) => r.startsWith('POST /v1/traces application/json'))).toBe(true);
    const [call, ...more] = spansNamed('tools/call echo');
    expect(more).toHaveLength(0);
    expect(call).toMatchObject({
      kind: SERVER,
      parentSpanId: '',
      attributes: {
        'toolport.service': 'everything',
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'echo',
        'toolport.outcome': 'ok',
      },
      status: { code: 0 },
      resource: { 'service.name': 'toolport-under-test', 'service.version': gw.ctx.version },
    });
    const parent = call as CollectedSpan;
    expect(parent.traceId).toMatch(/^[0-9a-f]{32}$/);
    const children = childOf(parent);
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({
      name: 'upstream tools/call',
      kind: CLIENT,
      traceId: parent.traceId,
      attributes: { 'toolport.service': 'everything', 'mcp.method.name': 'tools/call', 'toolport.upstream.type': 'stdio' },
    });
    // Uncounted requests are traced too: the client's initialize and listing.
    expect(spansNamed('initialize').length).toBeGreaterThan(0);
  });

  it('marks a failed call as an error on both spans', async () => {
    const c = await connect(gw.url, 'everything', key, { sdk: 'v2', wire: 'sse' });
    open.push(c);
    await c.callTool('no-such-tool', {}).catch(() => undefined);
    await gw.ctx.tracing.flush();
    const [call] = spansNamed('tools/call no-such-tool');
    expect(call).toMatchObject({ attributes: { 'toolport.outcome': 'error', 'error.type': 'error' }, status: { code: ERROR } });
    const [upstream] = childOf(call as CollectedSpan);
    expect(upstream?.name).toBe('upstream tools/call');
  });

  it('exports a span per API request named by its route pattern, with the status', async () => {
    const health = await gw.app.inject({ method: 'GET', url: '/api/health' });
    expect(health.statusCode).toBe(200);
    const unknownTask = await gw.app.inject({ method: 'GET', url: '/api/mcp_market/install_status/raw-task-4711' });
    await gw.ctx.tracing.flush();
    expect(spansNamed('GET /api/health')[0]).toMatchObject({
      kind: SERVER,
      parentSpanId: '',
      attributes: { 'http.request.method': 'GET', 'http.route': '/api/health', 'http.response.status_code': 200 },
    });
    expect(spansNamed('GET /api/mcp_market/install_status/:taskId')[0]).toMatchObject({
      attributes: { 'http.route': '/api/mcp_market/install_status/:taskId', 'http.response.status_code': unknownTask.statusCode },
    });
    expect(JSON.stringify(collector.spans)).not.toContain('raw-task-4711');
    // Proxy routes have their MCP spans instead of HTTP ones.
    expect(collector.spans.some((s) => String(s.attributes['http.route'] ?? '').startsWith('/proxy/'))).toBe(false);
  });

  it('sends the spans still buffered when the app closes', async () => {
    const c = await connect(gw.url, 'everything', key, { sdk: 'v1', wire: 'http' });
    expect(textOf(await c.callTool('echo', { message: 'last words' }))).toBe('Echo: last words');
    await c.close();
    expect(spansNamed('tools/call echo')).toHaveLength(1);
    // Closing the app (as a restart does) flushes; nothing else asked for it.
    await gw.restart();
    expect(spansNamed('tools/call echo')).toHaveLength(2);
  });
});

describe.each(engines)('tracing without OTEL_EXPORTER_OTLP_ENDPOINT on %s', (engine) => {
  let collector: FakeOtlp;
  let gw: LiveGateway;
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;

  beforeAll(async () => {
    collector = await startFakeOtlp();
    // Where an exporter built by mistake would send: the SDK falls back to the process environment.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
    gw = await startGateway(engine);
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    await gw?.close();
    await collector?.close();
  });

  it('builds no exporter and sends nothing, through traffic and shutdown', async () => {
    expect(gw.ctx.tracing.enabled).toBe(false);
    const key = (await addUser(gw.ctx, 'bob')).key;
    await addService(gw.ctx, { name: 'everything' });
    const c = await connect(gw.url, 'everything', key, { sdk: 'v1', wire: 'http' });
    expect(textOf(await c.callTool('echo', { message: 'untraced' }))).toBe('Echo: untraced');
    await c.close();
    expect((await gw.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    await gw.ctx.tracing.flush();
    await gw.restart();
    expect(collector.requests).toEqual([]);
  });
});
