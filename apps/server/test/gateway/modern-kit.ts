import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

// What the tests of the 2026-07-28 era share: the SDK v2 client in each negotiation mode, the raw modern POST,
// and the fixtures on the v2 SDK.

/** A stdio tool server on the v2 SDK (both eras), with a multi-round-trip tool. */
export const modernFixture = path.join(import.meta.dirname, '../fixtures/modern-server.mjs');

export type Mode = 'legacy' | 'auto' | { pin: string };
export const PIN = { pin: '2026-07-28' } as const;
export const MODERN = '2026-07-28';
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-wire', version: '1' },
};

export interface Asked {
  elicitation: number;
  sampling: number;
}

/** A real SDK v2 client in one negotiation mode, answering elicitation and sampling as an application would. */
export async function v2Client(url: string, key: string, mode: Mode, asked: Asked = { elicitation: 0, sampling: 0 }) {
  const client = new Client({ name: 'modern-era-test', version: '1.0.0' }, {
    capabilities: { elicitation: { form: {} }, sampling: {} },
    versionNegotiation: { mode },
  } as ConstructorParameters<typeof Client>[1]);
  client.setRequestHandler('elicitation/create', async () => {
    asked.elicitation += 1;
    return { action: 'accept' as const, content: { name: 'Grace Hopper' } };
  });
  client.setRequestHandler('sampling/createMessage', async () => {
    asked.sampling += 1;
    return { role: 'assistant' as const, content: { type: 'text' as const, text: 'sampled in the modern era' }, model: 'test-model' };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return { client, asked };
}

export const texts = (result: unknown): string =>
  ((result as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** One raw POST of the modern era, with the standard headers unless the test overrides them. */
export async function modernPost(
  url: string,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string | undefined> = {},
) {
  const params = (body.params ?? {}) as Record<string, unknown>;
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const all: Record<string, string | undefined> = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': String(body.method),
    ...(name ? { 'mcp-name': name } : {}),
    ...headers,
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined)),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body, params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object) } } }),
  });
  const text = await res.text();
  // An answer may come as an event stream: its last message is the response.
  const json = text.startsWith('{')
    ? text
    : (text
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .pop()
        ?.slice(6) ?? '{}');
  // biome-ignore lint/suspicious/noExplicitAny: the assertions check the fields themselves
  return { status: res.status, body: JSON.parse(json) as any };
}
