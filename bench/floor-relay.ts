/**
 * The floor of any HTTP-to-stdio gateway on this machine: a bare `node:http` server that writes each
 * POST body as one line to a single server-everything process and answers with the next line it
 * prints. No authentication, sessions, validation, id rewriting or metering, and correct only for
 * one client calling sequentially; it exists to show what the extra hop itself costs here.
 *
 * Run by gateway.bench.ts (pinned like the other targets): `node --import tsx bench/floor-relay.ts <port> <server-everything>`.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';

const [port, entry] = process.argv.slice(2);
const upstream = spawn(process.execPath, [entry as string, 'stdio'], { stdio: ['pipe', 'pipe', 'ignore'] });
upstream.stdout.setEncoding('utf8');

let buffer = '';
let waiting: ((line: string) => void) | undefined;
upstream.stdout.on('data', (chunk: string) => {
  buffer += chunk;
  let end = buffer.indexOf('\n');
  while (end !== -1) {
    const line = buffer.slice(0, end);
    buffer = buffer.slice(end + 1);
    const resolve = waiting;
    waiting = undefined;
    resolve?.(line);
    end = buffer.indexOf('\n');
  }
});

http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      upstream.stdin.write(`${body}\n`);
      if (!body.includes('"id"')) {
        res.writeHead(202).end();
        return;
      }
      waiting = (line) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'floor' }).end(line);
    });
  })
  .listen(Number(port), '127.0.0.1', () => process.send?.('ready'));

process.on('SIGTERM', () => {
  upstream.kill();
  process.exit(0);
});
