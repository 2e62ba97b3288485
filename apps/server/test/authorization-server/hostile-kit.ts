import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import { leaksInternals } from '../fuzz/generators.js';

/** One answer of the OAuth server as the hostile-input tables check it. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export async function ask(app: FastifyInstance, opts: InjectOptions): Promise<Answer> {
  const res = await app.inject(opts);
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

/** What a table row expects: an OAuth error (status and code), or a redirect to a Location starting so. */
export type Expected = { status: number; error: string } | { status: 302 | 303; location: string };

/**
 * The rules every answer to hostile input keeps (issue 24): the status and code expected, the OAuth error
 * format and nothing else (`{error, error_description}`, never the console envelope), no stack trace or
 * server path, and no Location but the one expected: never a redirect to an untrusted URI.
 */
export function expectAnswer(answer: Answer, expected: Expected, label: string): void {
  expect(leaksInternals(answer.body), label).toBeUndefined();
  expect(answer.status, `${label}: ${answer.body.slice(0, 300)}`).toBe(expected.status);
  if ('location' in expected) {
    const location = String(answer.headers.location ?? '');
    expect(location.startsWith(expected.location), `${label}: ${location}`).toBe(true);
    return;
  }
  expect(answer.headers.location, label).toBeUndefined();
  expect(String(answer.headers['content-type']), label).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(Object.keys(body).sort(), label).toEqual(['error', 'error_description']);
  expect(body.error, label).toBe(expected.error);
  expect(typeof body.error_description === 'string' && body.error_description.length > 0, label).toBe(true);
  expect(answer.headers['cache-control'], label).toBe('no-store');
}

/** What a document server does at a path: answer, redirect, hang, or send something that is not a document. */
export type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A loopback HTTP server that counts every TCP connection and request it gets: refused fetches must
 * leave both at 0. Paths answer as `routes` says; any other path is a 404.
 */
export async function countingListener(routes: Record<string, Behaviour> = {}): Promise<{
  port: number;
  url: string;
  connections: () => number;
  requests: (path?: string) => number;
  close(): Promise<void>;
}> {
  let connections = 0;
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const route = routes[req.url ?? ''];
    if (route) route(req, res);
    else res.writeHead(404).end();
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    requests: (path) => (path === undefined ? requests.length : requests.filter((p) => p === path).length),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
