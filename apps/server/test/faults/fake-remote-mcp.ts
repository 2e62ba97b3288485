import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A remote MCP server over node:http that answers like a real one (streamable HTTP at /mcp, the
 * 2024-11-05 HTTP+SSE transport at /sse + /message) until told to misbehave on `tools/call`:
 * - `hang`: never answers;
 * - `reset`: starts the answer, then destroys the connection;
 * - `garbage`: lines that are not SSE before a good answer;
 * - `badjson`: an answer event whose data is not valid JSON;
 * - `truncated`: the answer event without its closing blank line, then the stream ends.
 * Tool `echo {text}` only. Stands in for internet services, which tests cannot reach.
 */
export type Misbehaviour = 'ok' | 'hang' | 'reset' | 'garbage' | 'badjson' | 'truncated';

interface Rpc {
  jsonrpc: '2.0';
  id?: number | string;
  method?: string;
  params?: { name?: string; arguments?: { text?: string }; protocolVersion?: string };
}

export interface FakeRemote {
  url: string;
  mode: Misbehaviour;
  /** tools/call requests received, to tell a retry from a first try. */
  calls: number;
  close(): Promise<void>;
}

const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

function answer(rpc: Rpc): unknown {
  switch (rpc.method) {
    case 'initialize':
      return {
        jsonrpc: '2.0',
        id: rpc.id,
        result: {
          protocolVersion: rpc.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'fake-remote', version: '1.0.0' },
        },
      };
    case 'tools/list':
      return { jsonrpc: '2.0', id: rpc.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } };
    case 'tools/call':
      return { jsonrpc: '2.0', id: rpc.id, result: { content: [{ type: 'text', text: `echo: ${rpc.params?.arguments?.text}` }] } };
    case 'ping':
      return { jsonrpc: '2.0', id: rpc.id, result: {} };
    default:
      return { jsonrpc: '2.0', id: rpc.id, error: { code: -32601, message: 'unknown method' } };
  }
}

/** Writes the answer to a tools/call on an SSE stream the way `mode` says; true when the stream must end. */
function misbehave(mode: Misbehaviour, rpc: Rpc, stream: ServerResponse): 'end' | 'keep' | 'gone' {
  const body = JSON.stringify(answer(rpc));
  switch (mode) {
    case 'ok':
      stream.write(event(answer(rpc)));
      return 'end';
    case 'hang':
      return 'keep';
    case 'reset':
      stream.write(`event: message\ndata: ${body.slice(0, 20)}`);
      // Flushed first, so the client has a started answer when the connection breaks.
      setTimeout(() => stream.socket?.destroy(), 50);
      return 'gone';
    case 'garbage':
      stream.write('this line is not SSE\n\u0000\u0001 binary junk\n:::\nretry: soon\n\n');
      stream.write(event(answer(rpc)));
      return 'end';
    case 'badjson':
      stream.write(`event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":{"content":[oops\n\n`);
      return 'end';
    case 'truncated':
      stream.write(`event: message\ndata: ${body}`);
      return 'end';
  }
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    req.on('data', (d) => {
      text += d;
    });
    req.on('end', () => resolve(text));
  });

export async function startFakeRemote(): Promise<FakeRemote> {
  const sockets = new Set<Socket>();
  const legacy = new Map<string, ServerResponse>();
  let nextSession = 0;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === '/mcp') {
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const rpc = JSON.parse(await readBody(req)) as Rpc;
      if (rpc.id === undefined) return void res.writeHead(202).end();
      if (rpc.method !== 'tools/call') {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (rpc.method === 'initialize') headers['mcp-session-id'] = `s${++nextSession}`;
        return void res.writeHead(200, headers).end(JSON.stringify(answer(rpc)));
      }
      fake.calls += 1;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      if (misbehave(fake.mode, rpc, res) === 'end') res.end();
      return;
    }
    if (url.pathname === '/sse' && req.method === 'GET') {
      const id = `l${++nextSession}`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: endpoint\ndata: /message?sessionId=${id}\n\n`);
      legacy.set(id, res);
      res.on('close', () => legacy.delete(id));
      return;
    }
    if (url.pathname === '/message' && req.method === 'POST') {
      const stream = legacy.get(url.searchParams.get('sessionId') ?? '');
      const rpc = JSON.parse(await readBody(req)) as Rpc;
      if (!stream) return void res.writeHead(404).end();
      res.writeHead(202).end('Accepted');
      if (rpc.id === undefined) return;
      if (rpc.method !== 'tools/call') return void stream.write(event(answer(rpc)));
      fake.calls += 1;
      // On the legacy transport the stream is the session: a truncated answer ends it.
      if (misbehave(fake.mode, rpc, stream) === 'end' && fake.mode === 'truncated') stream.end();
      return;
    }
    res.writeHead(404).end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const fake: FakeRemote = {
    url: `http://127.0.0.1:${address.port}`,
    mode: 'ok',
    calls: 0,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}
