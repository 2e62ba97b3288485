import net from 'node:net';

/** What came back on a raw socket: the status, the headers (lower-case names) and the body. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` as it is (no client library to tidy them) and reads until the server closes or has answered. */
export function rawRequest(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(request));
    let bytes = Buffer.alloc(0);
    const done = () => {
      socket.destroy();
      const text = bytes.toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    };
    socket.on('data', (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      // One answer with a Content-Length is complete once that many bytes arrived (keep-alive keeps the socket).
      const head = bytes.toString('latin1');
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const at = head.indexOf('\r\n\r\n');
      if (m?.[1] && at !== -1 && bytes.length - (at + 4) >= Number(m[1])) done();
    });
    socket.on('end', done);
    socket.on('error', reject);
    socket.setTimeout(5000, done);
  });
}

/**
 * Writes `request` whole, then resets the connection `afterMs` later, as a client that gives up does: the
 * gateway is typically still checking the request when its connection is gone.
 */
export function sendThenReset(port: number, request: string, afterMs = 5): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () =>
      socket.write(request, () =>
        setTimeout(() => {
          socket.resetAndDestroy();
          resolve();
        }, afterMs),
      ),
    );
    socket.on('error', reject);
  });
}
