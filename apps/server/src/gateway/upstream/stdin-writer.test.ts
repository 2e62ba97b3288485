import { Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StdinWriter } from './stdin-writer.js';

/** A pipe whose reader takes one piece each time `take()` is called, and keeps what it took. */
function slowPipe() {
  const held: (() => void)[] = [];
  const lines: string[] = [];
  let partial = '';
  const pipe = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _encoding, done) {
      held.push(() => {
        partial += chunk.toString();
        const parts = partial.split('\n');
        partial = parts.pop() ?? '';
        lines.push(...parts);
        done();
      });
    },
  });
  const take = async (n = Number.POSITIVE_INFINITY) => {
    for (let i = 0; i < n && held.length > 0; i++) {
      held.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
  };
  const ids = () => lines.map((l) => (JSON.parse(l) as { id?: number; method: string }).id ?? (JSON.parse(l) as { method: string }).method);
  return { pipe, take, ids };
}

/** Limits scaled down a thousandfold: 16 KiB handed over at most, pieces of 64 bytes. */
const LIMITS = { highWater: 16 * 1024, piece: 64 };

/** A request of about `kib` KiB. */
const request = (id: number, kib = 5): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'length', arguments: { text: 'x'.repeat(kib * 1024) } },
});

describe('stdin writer', () => {
  it('lets sends past the high-water mark wait, then hands them over in order as the reader takes input', async () => {
    const { pipe, take, ids } = slowPipe();
    const writer = new StdinWriter(pipe, 60_000, LIMITS);
    const settled: number[] = [];
    for (let id = 1; id <= 6; id++) {
      const sent = writer.send(request(id));
      if (sent) void sent.then(() => settled.push(id));
      else settled.push(id);
    }
    // 16 KiB is handed over at once (four of 5 KiB: the fourth crosses the mark); the rest waits.
    expect(settled).toEqual([1, 2, 3, 4]);
    await take();
    while (settled.length < 6) await take();
    await take();
    expect(settled).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ids()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(writer.stalled()).toBe(false);
  });

  it('drops a waiting request and its cancellation together', async () => {
    const { pipe, take, ids } = slowPipe();
    const writer = new StdinWriter(pipe, 60_000, LIMITS);
    for (let id = 1; id <= 4; id++) writer.send(request(id));
    const waiting = writer.send(request(5));
    expect(waiting).toBeInstanceOf(Promise);
    expect(writer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } })).toBeUndefined();
    await waiting;
    await take();
    expect(ids()).toEqual([1, 2, 3, 4]);
  });

  it('refuses only once nothing was taken for the bound: the waiting sends, then every new one', async () => {
    const { pipe, take } = slowPipe();
    const writer = new StdinWriter(pipe, 1_000, LIMITS);
    for (let id = 1; id <= 4; id++) writer.send(request(id));
    const waiting = writer.send(request(5));
    await new Promise((r) => setTimeout(r, 100));
    // Within the bound: not refused, it waits too.
    const within = writer.send(request(6, 0));
    expect(within).toBeInstanceOf(Promise);
    await expect(waiting).rejects.toThrow('tool server is not reading its input (nothing read for 1 s)');
    await expect(within).rejects.toThrow('tool server is not reading its input');
    expect(writer.stalled()).toBe(true);
    await expect(writer.send(request(7, 0))).rejects.toThrow('tool server is not reading its input');
    // It reads again: no longer refused.
    await take(1);
    expect(writer.stalled()).toBe(false);
    await take();
    expect(writer.send(request(8, 0))).toBeUndefined();
  });
});
