import type { JSONRPCError, JSONRPCNotification, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Era, MemoryChannel, type ScriptOptions, serve } from '../../../test/fixtures/memory-channel.js';
import type { ServiceSpec } from '../catalog.js';
import type { SessionPeer } from '../link-api.js';
import { Link } from './link.js';
import { ModernLink } from './modern-link.js';
import { defaultTuning, type LinkDeps } from './types.js';

/**
 * The lifecycle both eras share (lifecycle.ts, docs/decisions/0044), run against each era's link over in-memory
 * connections with fake timers: the same cases, the same expectations.
 */
const tuning = { ...defaultTuning, backoffBaseMs: 1000, backoffMaxMs: 8000, maxRestartWaitMs: 1500 };
const spec = { id: 1, name: 'memory', type: 'stdio', updatedAt: 1 } as ServiceSpec;

type Answer = JSONRPCResponse | JSONRPCError;

function machine(era: Era, script: (start: number) => ScriptOptions | 'fails' = () => ({})) {
  const log: string[] = [];
  const deps = {
    serviceLog: {
      write: (e: { level: string; message: string }) => log.push(`${e.level} ${e.message}`),
      registerSecrets() {},
      redact: (s: string) => s,
    },
    options: { get: () => '', int: () => 0 },
    logger: pino({ level: 'silent' }),
    tuning,
  } as unknown as LinkDeps;
  const channels: MemoryChannel[] = [];
  const open = async () => {
    const how = script(channels.length + 1);
    if (how === 'fails') {
      channels.push(new MemoryChannel());
      throw new Error('spawn failed');
    }
    const channel = new MemoryChannel();
    serve(channel.peer, era, how);
    channels.push(channel);
    return channel;
  };
  const link = era === '2025-11-25' ? new Link({ spec, mode: 'shared', open, deps }) : new ModernLink({ spec, open, deps });
  const session: SessionPeer = {
    id: 's1',
    userId: 1,
    protocolVersion: era,
    notify: () => undefined,
    ...(era === '2026-07-28' ? { era: 'modern' as const } : {}),
  };
  const notes: JSONRPCNotification[] = [];
  const answers: Answer[] = [];
  const call = (id: number | string, name = 'echo', progressToken?: string) =>
    new Promise<Answer>((resolve) => {
      link.request(
        session,
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name, arguments: { message: String(id) }, ...(progressToken ? { _meta: { progressToken } } : {}) },
        },
        {
          notification: (n) => notes.push(n),
          response: (a) => {
            answers.push(a);
            resolve(a);
          },
        },
      );
    });
  return { link, session, channels, call, notes, answers, log, opens: () => channels.length };
}

const text = (a: Answer) => ('result' in a ? (a.result as { content: { text: string }[] }).content[0]?.text : a.error.message);
const ERAS: Era[] = ['2025-11-25', '2026-07-28'];

describe.each(ERAS)('the link machine in the %s era', (era) => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("starts on the first request and answers under the client's own id and progress token", async () => {
    const m = machine(era);
    const answer = m.call(7, 'echo', 'p7');
    await vi.advanceTimersByTimeAsync(0);
    expect(await answer).toMatchObject({ id: 7 });
    expect(text(await answer)).toBe('echo: 7');
    expect(m.notes.map((n) => n.params?.progressToken)).toEqual(['p7']);
    // Upstream it went under the link's own id and token.
    const [upstream] = m.channels[0]?.peer.requests('tools/call') ?? [];
    expect(upstream?.id).not.toBe(7);
    expect(upstream?.params?._meta?.progressToken).toBe(upstream?.id);
    expect(m.link.state).toBe('ready');
    expect(m.opens()).toBe(1);
  });

  it('answers the request in flight when the server crashes and, with a session attached, restarts after the base delay', async () => {
    const m = machine(era);
    m.link.attach(m.session);
    const crashed = m.call(1, 'crash');
    await vi.advanceTimersByTimeAsync(0);
    expect(text(await crashed)).toMatch(/^upstream unavailable: tool server exited with code 3/);
    expect(m.link.state).toBe('backoff');
    await vi.advanceTimersByTimeAsync(999);
    expect(m.opens()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(m.opens()).toBe(2);
    expect(m.link.state).toBe('ready');
    const again = m.call(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(text(await again)).toBe('echo: 2');
  });

  it('backs off 1x, 2x, 4x the base delay between failed starts, then serves', async () => {
    const m = machine(era, (start) => (start <= 3 ? 'fails' : {}));
    m.link.attach(m.session);
    await expect(m.link.ensureReady()).rejects.toThrow('could not start: spawn failed');
    const opensAt: number[] = [];
    for (let ms = 0; ms < 7000; ms += 250) {
      const before = m.opens();
      await vi.advanceTimersByTimeAsync(250);
      if (m.opens() > before) opensAt.push(ms + 250);
    }
    expect(opensAt).toEqual([1000, 3000, 7000]);
    expect(m.link.state).toBe('ready');
  });

  it('lets a request wait out a short backoff, and refuses one at once during a long one, with the reason', async () => {
    const m = machine(era, (start) => (start <= 2 ? 'fails' : {}));
    m.link.attach(m.session);
    await expect(m.link.ensureReady()).rejects.toThrow('spawn failed');
    // The restart is 1000 ms away, within maxRestartWaitMs: the request waits, then finds the second start failing.
    const waiting = m.call(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(text(await waiting)).toMatch(/^upstream unavailable: could not start: spawn failed/);
    // Now 2000 ms away: refused at once.
    const refused = m.call(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(text(await refused)).toBe('upstream unavailable: restarting after a failure (could not start: spawn failed)');
    await vi.advanceTimersByTimeAsync(2000);
    const served = m.call(3);
    await vi.advanceTimersByTimeAsync(0);
    expect(text(await served)).toBe('echo: 3');
  });

  it('forgets the backoff on restart, starts again after a stop, and refuses everything once closed', async () => {
    const m = machine(era, (start) => (start === 1 ? 'fails' : {}));
    m.link.attach(m.session);
    await expect(m.link.ensureReady()).rejects.toThrow('spawn failed');
    expect(m.link.state).toBe('backoff');
    await m.link.restart('reconnect asked');
    await vi.advanceTimersByTimeAsync(0);
    expect(m.opens()).toBe(2);
    expect(m.link.state).toBe('ready');
    await m.link.stop('idle');
    expect(m.link.state).toBe('stopped');
    const after = m.call(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(text(await after)).toBe('echo: 1');
    expect(m.opens()).toBe(3);
    await m.link.close('service removed');
    const closed = m.call(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(text(await closed)).toBe('upstream unavailable: service removed');
    expect(m.opens()).toBe(3);
  });

  it('answers each request exactly once when its connection is replaced under it', async () => {
    const m = machine(era, (start) => (start === 1 ? { hangs: ['tools/call'] } : {}));
    m.link.attach(m.session);
    const first = m.call(1);
    await vi.advanceTimersByTimeAsync(0);
    const old = m.channels[0];
    const [sent] = old?.peer.requests('tools/call') ?? [];
    await m.link.restart('reconnect asked');
    expect(text(await first)).toBe('upstream unavailable: reconnect asked');
    // The old connection answers late: nobody hears it.
    old?.deliver({ jsonrpc: '2.0', id: sent?.id ?? 0, result: { content: [{ type: 'text', text: 'late' }] } });
    await vi.advanceTimersByTimeAsync(0);
    expect(m.answers).toHaveLength(1);
    expect(m.link.state).toBe('ready');
  });

  it('stops without a backoff when the server refuses the era, and nothing retries it', async () => {
    const m = machine(era, () => ({ refuses: true }));
    m.link.attach(m.session);
    await expect(m.link.ensureReady()).rejects.toThrow(/could not start/);
    expect(m.link.state).toBe('stopped');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(m.opens()).toBe(1);
    if (m.link instanceof ModernLink) expect(m.link.refusedEra).toBe(true);
    else expect(m.link.onlyModern).toEqual(['2026-07-28']);
  });
});
