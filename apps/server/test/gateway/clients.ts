import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2, SSEClientTransport as SseV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SseV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, GetPromptResult, Notification, Progress, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

export type Sdk = 'v1' | 'v2';
export type Wire = 'http' | 'sse';
export type KeyIn = 'header' | 'query';

export interface CallOptions {
  onprogress?: (progress: Progress) => void;
  signal?: AbortSignal;
  timeout?: number;
}

/**
 * One real SDK client (1.x or 2.x) connected to the gateway, behind a small common face so each
 * test runs unchanged with both majors. `notifications` collects every server notification the
 * client has no handler for (resource updates, list changes, logs); `errors` what it reported.
 */
export interface McpClient {
  sdk: Sdk;
  notifications: Notification[];
  errors: Error[];
  sessionId(): string | undefined;
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(name: string, args: Record<string, unknown>, opts?: CallOptions): Promise<CallToolResult>;
  listResources(): Promise<{ resources: { uri: string; name: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string; name: string }[] }>;
  readResource(uri: string): Promise<ReadResourceResult>;
  subscribe(uri: string): Promise<void>;
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getPrompt(name: string, args?: Record<string, string>): Promise<GetPromptResult>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  sdk: Sdk;
  wire: Wire;
  /** Where the API key travels: the Authorization header, or `?key=` as the console snippet shows. */
  keyIn?: KeyIn;
  /** Reuse a session id minted earlier (streamable HTTP): the client skips initialize. */
  sessionId?: string;
}

export function endpointUrl(base: string, service: string, wire: Wire, key: string, keyIn: KeyIn): URL {
  const url = new URL(`${base}/proxy/${service}/${wire === 'http' ? 'mcp' : 'sse'}`);
  if (keyIn === 'query') url.searchParams.set('key', key);
  return url;
}

export async function connect(base: string, service: string, key: string, opts: ConnectOptions): Promise<McpClient> {
  return connectUrl(endpointUrl(base, service, opts.wire, key, opts.keyIn ?? 'header'), key, opts);
}

/** The same on any endpoint URL (a group's face, say); a `?key=` is expected in `url` already when keyIn is 'query'. */
export async function connectUrl(url: URL, key: string, opts: ConnectOptions): Promise<McpClient> {
  const keyIn = opts.keyIn ?? 'header';
  const headers: Record<string, string> = keyIn === 'header' ? { authorization: `Bearer ${key}` } : {};
  const info = { name: `toolport-test-${opts.sdk}`, version: '1.0.0' };
  const notifications: Notification[] = [];
  const errors: Error[] = [];
  const requestInit = { headers };

  if (opts.sdk === 'v1') {
    const client = new ClientV1(info, { capabilities: {} });
    const transport =
      opts.wire === 'http'
        ? new HttpV1(url, { requestInit, ...(opts.sessionId ? { sessionId: opts.sessionId } : {}) })
        : new SseV1(url, {
            requestInit,
            eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }) },
          });
    client.fallbackNotificationHandler = async (n) => void notifications.push(n);
    client.onerror = (err) => void errors.push(err);
    await client.connect(transport);
    return {
      sdk: 'v1',
      notifications,
      errors,
      sessionId: () => (transport instanceof HttpV1 ? transport.sessionId : undefined),
      listTools: () => client.listTools(),
      callTool: async (name, args, o = {}) => (await client.callTool({ name, arguments: args }, undefined, o)) as CallToolResult,
      listResources: () => client.listResources(),
      listResourceTemplates: () => client.listResourceTemplates(),
      readResource: (uri) => client.readResource({ uri }),
      subscribe: async (uri) => void (await client.subscribeResource({ uri })),
      listPrompts: () => client.listPrompts(),
      getPrompt: (name, args) => client.getPrompt({ name, arguments: args ?? {} }),
      ping: async () => void (await client.ping()),
      close: () => client.close(),
    };
  }

  const client = new ClientV2(info, { capabilities: {} });
  const transport =
    opts.wire === 'http'
      ? new HttpV2(url, { requestInit, ...(opts.sessionId ? { sessionId: opts.sessionId } : {}) })
      : new SseV2(url, {
          requestInit,
          eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }) },
        });
  client.fallbackNotificationHandler = async (n) => void notifications.push(n as Notification);
  client.onerror = (err) => void errors.push(err);
  await client.connect(transport);
  return {
    sdk: 'v2',
    notifications,
    errors,
    sessionId: () => (transport instanceof HttpV2 ? transport.sessionId : undefined),
    listTools: () => client.listTools(),
    callTool: async (name, args, o = {}) => (await client.callTool({ name, arguments: args }, o)) as CallToolResult,
    listResources: () => client.listResources(),
    listResourceTemplates: () => client.listResourceTemplates(),
    readResource: async (uri) => (await client.readResource({ uri })) as ReadResourceResult,
    subscribe: async (uri) => void (await client.subscribeResource({ uri })),
    listPrompts: () => client.listPrompts(),
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args ?? {} })) as GetPromptResult,
    ping: async () => void (await client.ping()),
    close: () => client.close(),
  };
}

/** The text of the first content block of a tool result. */
export const textOf = (result: CallToolResult): string => {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
};

/** Resolves once `check` holds, polling briefly; rejects after `ms` with `what` in the message. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * SDK clients run notification handlers a microtask late but settle a response at once: progress
 * notifications read in the same chunk as their response (the last ones, when the test process is
 * busy) are reported through `onerror` as "unknown token" instead of being delivered; a direct
 * stdio connection does the same. Returns the progress values of such reports.
 */
function lateProgress(client: McpClient, steps: number): number[] {
  const late: number[] = [];
  for (const err of client.errors) {
    const json = /unknown token: (\{.*\})$/.exec(err.message)?.[1];
    const params = json ? (JSON.parse(json) as { params?: { progress?: number; total?: number } }).params : undefined;
    if (params?.total === steps && typeof params.progress === 'number') late.push(params.progress);
  }
  return late;
}

/**
 * The caller saw exactly its own steps 1..n, in order, each once: delivered, or (a trailing run)
 * reported late as described above. Nothing else went wrong on the client.
 */
export function expectOwnProgress(client: McpClient, received: Progress[], steps: number): void {
  const late = lateProgress(client, steps);
  expect(client.errors).toHaveLength(late.length);
  expect(received.every((p) => p.total === steps)).toBe(true);
  expect([...received.map((p) => p.progress), ...late]).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
  expect(received.length).toBeGreaterThan(0);
}
