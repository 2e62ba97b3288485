import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService, addUser, type LiveGateway, startGateway } from '../gateway/gateway-harness.js';
import { ADMIN_PASSWORD } from '../harness.js';
import { ensureSuite, node22, tools } from './suite-install.js';
import { type Check, run, runServerSuite } from './suite-run.js';

// The official MCP conformance suite, run through the gateway against our fixture server
// (apps/server/test/fixtures/conformance-server.mjs). The suite lives in tools/conformance, outside the npm
// workspaces, with the Node 22 it needs; it is installed here on demand. Results: docs/conformance.md.
const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(tools, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const fixture = path.resolve(here, '../fixtures/conformance-server.mjs');
const SPEC = '2025-11-25';

/** Every server scenario of the suite for SPEC, as the suite itself lists them. */
async function scenarios(): Promise<string[]> {
  const { stdout } = await run(node22, [cli, 'list', '--server', '--spec-version', SPEC]);
  return [...stdout.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1] as string);
}

/** Runs every SPEC server scenario against `url`; returns each scenario's checks. */
const runSuite = (url: string) => runServerSuite(cli, url, ['--suite', 'all', '--spec-version', SPEC]);

const failuresOf = (results: Map<string, Check[]>) =>
  Object.fromEntries(
    [...results]
      .map(([name, checks]) => [name, checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`)] as const)
      .filter(([, f]) => f.length > 0),
  );

// server-sse-polling has only INFO checks through the gateway: its test_reconnection call is answered with JSON
// (the gateway answers a POST with an SSE stream only when the upstream sends notifications or requests before
// its answer), so the suite records "priming event tests not applicable" and passes nothing and fails nothing.
const WITHOUT_SUCCESS_CHECKS = ['server-sse-polling'];

/** Scenarios that failed nothing and passed at least one check. */
const passedOf = (results: Map<string, Check[]>) =>
  [...results]
    .filter(([, checks]) => checks.some((c) => c.status === 'SUCCESS') && !checks.some((c) => c.status === 'FAILURE'))
    .map(([name]) => name)
    .sort();

describe(`the official conformance suite (${SPEC} server scenarios) through /proxy`, () => {
  let gw: LiveGateway;
  let key: string;
  let serviceId: number;
  let all: string[];

  beforeAll(async () => {
    await ensureSuite([cli]);
    all = await scenarios();
    gw = await startGateway('sqlite');
    key = (await addUser(gw.ctx, 'conformance')).key;
    serviceId = await addService(gw.ctx, { name: 'conformance', command: process.execPath, args: [fixture] });
  }, 360_000);
  afterAll(async () => {
    await gw?.close();
  });

  // The suite cannot send headers, so the key travels as `?key=` (docs/api.md, /proxy authentication).
  const proxyUrl = () => `${gw.url}/proxy/conformance/mcp?key=${encodeURIComponent(key)}`;

  it('lists the scenarios it is about to run', () => {
    expect(all.length).toBeGreaterThanOrEqual(30);
    expect(all).toContain('server-initialize');
    expect(all).toContain('dns-rebinding-protection');
  });

  it('passes every scenario in shared mode (one upstream for every client)', async () => {
    const results = await runSuite(proxyUrl());
    expect([...results.keys()].sort()).toEqual([...all].sort());
    expect(failuresOf(results)).toEqual({});
    expect(passedOf(results)).toEqual(all.filter((n) => !WITHOUT_SUCCESS_CHECKS.includes(n)).sort());
    expect(results.get('server-sse-polling')?.find((c) => c.id === 'server-sse-content-type')?.status).toBe('INFO');
  }, 300_000);

  it('passes every scenario in isolated mode (isolation: "session", set through PUT /api/mcp_services/{id})', async () => {
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ADMIN_PASSWORD }),
    });
    const token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    const put = await fetch(`${gw.url}/api/mcp_services/${serviceId}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ isolation: 'session' }),
    });
    expect(put.status).toBe(200);
    const results = await runSuite(proxyUrl());
    expect([...results.keys()].sort()).toEqual([...all].sort());
    expect(failuresOf(results)).toEqual({});
    expect(passedOf(results)).toEqual(all.filter((n) => !WITHOUT_SUCCESS_CHECKS.includes(n)).sort());
    expect(results.get('server-sse-polling')?.find((c) => c.id === 'server-sse-content-type')?.status).toBe('INFO');
  }, 300_000);
});
