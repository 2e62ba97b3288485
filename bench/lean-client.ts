import http from 'node:http';

/**
 * A minimal streamable HTTP MCP client for load: initialize once, then `tools/call echo` with a
 * unique message per call, checking that each answer carries the call's own id and text. It costs
 * far less CPU per call than an SDK client, so the load generator is not what saturates first.
 * Accepts both a JSON answer and an SSE answer (supergateway streams every response).
 */
export interface LeanSession {
  call(message: string): Promise<'ok' | 'mismatch'>;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const PROTOCOL = '2025-06-18';

function request(agent: http.Agent, url: URL, headers: Record<string, string>, body: string | undefined, method = 'POST'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: body ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The JSON-RPC message answering `id` in a JSON or SSE body. */
function answer(reply: Reply, id: number): { id?: unknown; result?: { content?: { text?: string }[] } } | undefined {
  const type = reply.headers['content-type'] ?? '';
  const messages = type.startsWith('text/event-stream')
    ? reply.body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)))
    : [JSON.parse(reply.body)];
  return messages.find((m) => m && m.id === id);
}

export async function openLeanSession(endpoint: string, key: string | undefined, agent: http.Agent): Promise<LeanSession> {
  const url = new URL(endpoint);
  const base: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...(key ? { authorization: `Bearer ${key}` } : {}),
  };
  const init = await request(
    agent,
    url,
    base,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  );
  const sessionId = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sessionId !== 'string') throw new Error(`initialize failed: ${init.status} ${init.body.slice(0, 200)}`);
  const headers = { ...base, 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL };
  const initialized = await request(agent, url, headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  if (initialized.status !== 202) throw new Error(`initialized failed: ${initialized.status}`);

  let nextId = 1;
  return {
    async call(message) {
      const id = nextId++;
      const reply = await request(
        agent,
        url,
        headers,
        JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }),
      );
      if (reply.status !== 200) throw new Error(`HTTP ${reply.status}: ${reply.body.slice(0, 200)}`);
      return answer(reply, id)?.result?.content?.[0]?.text === `Echo: ${message}` ? 'ok' : 'mismatch';
    },
    async close() {
      await request(agent, url, { ...headers }, undefined, 'DELETE').catch(() => undefined);
    },
  };
}

/**
 * The same minimal client over stdio: JSON lines to a spawned server's stdin, answers matched by id
 * from its stdout. The reference for what the gateway's HTTP hop adds, without an SDK on either side.
 */
export async function openLeanStdio(command: string, args: string[]): Promise<LeanSession> {
  const { spawn } = await import('node:child_process');
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map<number, (message: { result?: { content?: { text?: string }[] } }) => void>();
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let end = buffer.indexOf('\n');
    while (end !== -1) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      const message = JSON.parse(line);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
      end = buffer.indexOf('\n');
    }
  });
  let nextId = 0;
  const send = (method: string, params: unknown) =>
    new Promise<{ result?: { content?: { text?: string }[] } }>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await send('initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    async call(message) {
      const answer = await send('tools/call', { name: 'echo', arguments: { message } });
      return answer.result?.content?.[0]?.text === `Echo: ${message}` ? 'ok' : 'mismatch';
    },
    async close() {
      child.kill();
    },
  };
}
