import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, createTestApp, type TestApp } from '../harness.js';
import { addService, addUser } from './gateway-harness.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MODERN = '2026-07-28';

/** One modern tools/call (with the standard headers) on one replica; the JSON-RPC answer. */
async function modernCall(base: string, key: string, id: number, params: Record<string, unknown>, service = 'everything') {
  const res = await fetch(`${base}/proxy/${service}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
      },
    }),
  });
  const text = await res.text();
  const json = text.startsWith('{')
    ? text
    : (text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .pop()
        ?.slice(6) ?? '{}');
  // biome-ignore lint/suspicious/noExplicitAny: the assertions check the fields themselves
  return JSON.parse(json) as any;
}

/**
 * A 2026-07-28 call waiting for the client's input, translated for a legacy upstream, lives on the replica that
 * asked (decision 0031): a retry on another replica gets a clear error, and the call still completes on its own
 * replica. An upstream that speaks the revision keeps the state in the client's hands (decision 0039): its retry
 * completes on whichever replica it reaches.
 */
describe('a modern call waiting for input, with two replicas', () => {
  const apps: TestApp[] = [];
  const urls: string[] = [];
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await createPgDatabase();
    drop = () => database.drop();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: `toolport-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`,
    };
    for (let i = 0; i < 2; i++) {
      const t = await createTestApp('postgres', env);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      apps.push(t);
      urls.push(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`);
    }
  });
  afterAll(async () => {
    await Promise.all(apps.map((t) => t.close()));
    await drop?.();
  });

  it('answers a retry on the other replica with a clear error and completes it on its own', async () => {
    const [a, b] = urls as [string, string];
    await addService((apps[0] as TestApp).ctx, { name: 'everything' });
    const user = await addUser((apps[0] as TestApp).ctx, 'modern-replica-user');
    const call = { name: 'trigger-elicitation-request', arguments: {} };
    const first = await modernCall(a, user.key, 1, call);
    expect(first.result.resultType).toBe('input_required');
    const [key] = Object.keys(first.result.inputRequests) as [string];
    const retry = {
      ...call,
      requestState: first.result.requestState,
      inputResponses: { [key]: { action: 'accept', content: { name: 'Katherine Johnson' } } },
    };
    const elsewhere = await modernCall(b, user.key, 2, retry);
    expect(elsewhere.error.code).toBe(-32602);
    expect(elsewhere.error.message).toMatch(/requestState is unknown or has expired.*start the call again/);
    const home = await modernCall(a, user.key, 3, retry);
    expect(home.result.content.map((c: { text: string }) => c.text).join('\n')).toContain('Name: Katherine Johnson');
  });

  it('completes a retry on the other replica when the upstream speaks the revision itself', async () => {
    const [a, b] = urls as [string, string];
    await addService((apps[0] as TestApp).ctx, { name: 'v2', args: [path.join(import.meta.dirname, '../fixtures/modern-server.mjs')] });
    const user = await addUser((apps[0] as TestApp).ctx, 'modern-replica-user-2');
    const call = { name: 'confirm', arguments: { action: 'ship' } };
    const first = await modernCall(a, user.key, 1, call, 'v2');
    expect(first.result).toMatchObject({ resultType: 'input_required', requestState: 'confirm:ship' });
    const retry = {
      ...call,
      requestState: first.result.requestState,
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
    };
    const elsewhere = await modernCall(b, user.key, 2, retry, 'v2');
    expect(elsewhere.result.content[0].text).toBe('ship: confirmed=true (state confirm:ship)');
  });
});
