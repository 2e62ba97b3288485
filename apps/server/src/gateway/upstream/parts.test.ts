import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../../test/fixtures/upstream-kit.js';
import { configuredFetch } from '../../infra/outbound.js';
import { Backoff } from './backoff.js';
import { LineLimiter } from './line-limiter.js';
import { LineSplitter } from './line-splitter.js';
import { perRequestFetch } from './per-request-fetch.js';
import { buildProcessEnv } from './process-env.js';
import { Subscriptions } from './subscriptions.js';

describe('Backoff', () => {
  it('doubles the delay per failure up to the cap, and starts over after a stable run', () => {
    const backoff = new Backoff({ baseMs: 1000, maxMs: 60_000, stableMs: 60_000 });
    const delays = Array.from({ length: 8 }, (_, i) => {
      backoff.up(i * 10);
      return backoff.failed(i * 10 + 5);
    });
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    backoff.up(1_000_000);
    expect(backoff.failed(1_060_000)).toBe(1000);
    expect(backoff.failed(1_060_001)).toBe(2000);
    backoff.reset();
    expect(backoff.failed()).toBe(1000);
  });
});

describe('LineSplitter', () => {
  const split = (max: number, chunks: string[], ended = false) => {
    const lines: string[] = [];
    const dropped: number[] = [];
    const splitter = new LineSplitter(
      max,
      (l) => lines.push(l),
      (n) => dropped.push(n),
    );
    for (const c of chunks) splitter.push(Buffer.from(c));
    if (ended) splitter.end();
    return { lines, dropped };
  };

  it('joins lines split across chunks, strips CR and skips empty lines', () => {
    expect(split(100, ['{"a":', '1}\r\n\n{"b"', ':2}\n{"c":3}'])).toEqual({ lines: ['{"a":1}', '{"b":2}'], dropped: [] });
  });

  it('drops a line over the limit whole, and carries on after its newline', () => {
    expect(split(8, ['short\n', '0123456', '789abc', 'def\nok\n'])).toEqual({ lines: ['short', 'ok'], dropped: [16] });
    expect(split(8, ['0123456789\nnext\n'])).toEqual({ lines: ['next'], dropped: [10] });
  });

  it('gives the last line without a newline when the stream ends, and reports one that was too long', () => {
    expect(split(100, ['one\ntw', 'o'], true)).toEqual({ lines: ['one', 'two'], dropped: [] });
    expect(split(100, ['one\n'], true)).toEqual({ lines: ['one'], dropped: [] });
    expect(split(4, ['ok\n0123456789'], true)).toEqual({ lines: ['ok'], dropped: [10] });
  });
});

describe('LineLimiter', () => {
  it('lets a number of lines through per second and reports the rest as one line', () => {
    vi.useFakeTimers();
    try {
      const out: string[] = [];
      const limiter = new LineLimiter(
        3,
        (l) => out.push(l),
        (n) => out.push(`${n} suppressed`),
      );
      for (let i = 0; i < 10; i++) limiter.offer(`l${i}`);
      expect(out).toEqual(['l0', 'l1', 'l2']);
      vi.advanceTimersByTime(1000);
      expect(out).toEqual(['l0', 'l1', 'l2', '7 suppressed']);
      limiter.offer('later');
      expect(out.at(-1)).toBe('later');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('buildProcessEnv', () => {
  it('copies only the safe list, then the service’s variables, then the user’s', () => {
    const env = buildProcessEnv(
      {
        PATH: '/bin',
        HOME: '/home/x',
        SECRET_KEY: 's',
        DATABASE_URL: 'postgres://',
        REDIS_URL: 'redis://',
        ADMIN_PASSWORD: 'p',
        OTHER: 'o',
      },
      { TOKEN: 'service', MODE: 'a' },
      { TOKEN: 'user' },
      { npm: 'https://registry.example' },
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/home/x', npm_config_registry: 'https://registry.example', TOKEN: 'user', MODE: 'a' });
  });
});

describe('Subscriptions', () => {
  it('asks the upstream for the first subscriber and tells it when the last one leaves', () => {
    const subs = new Subscriptions();
    expect(subs.subscribe('a', 'u')).toBe(true);
    expect(subs.subscribe('b', 'u')).toBe(false);
    expect([...subs.subscribers('u')]).toEqual(['a', 'b']);
    expect(subs.unsubscribe('a', 'u')).toBe(false);
    expect(subs.unsubscribe('a', 'u')).toBe(false);
    expect(subs.dropSession('b')).toEqual(['u']);
    expect(subs.uris()).toEqual([]);
  });

  it('forgets a subscription the upstream refused', () => {
    const subs = new Subscriptions();
    const request = {};
    subs.subscribe('a', 'u');
    subs.asked(request, 'u');
    subs.requestFailed(request);
    expect([...subs.subscribers('u')]).toEqual([]);
  });
});

describe('perRequestFetch', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        return;
      }
      res.end('ok');
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('never listens on the shared signal and forgets each request once its body is read', async () => {
    const shared = new AbortController();
    const live = new Set<AbortController>();
    const fetchOne = perRequestFetch(live, configuredFetch);
    const bodies = await Promise.all(
      Array.from({ length: 30 }, () => fetchOne(`${url}/`, { signal: shared.signal }).then((r) => r.text())),
    );
    expect(bodies.every((b) => b === 'ok')).toBe(true);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(live.size).toBe(0);
  });

  it('keeps a streaming request abortable until it ends', async () => {
    const live = new Set<AbortController>();
    const response = await perRequestFetch(live, configuredFetch)(`${url}/stream`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    expect(live.size).toBe(1);
    for (const c of live) c.abort();
    await expect(reader.read()).rejects.toThrow();
    expect(live.size).toBe(0);
  });
});
