import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceCatalog } from '../src/gateway/catalog.js';
import { LegacyRelay } from '../src/gateway/downstream/legacy-relay.js';
import { EventRelay, parseConfigEvent } from '../src/infra/event-relay.js';
import { type ConfigEvent, ConfigEvents } from '../src/infra/events.js';
import { createLogger } from '../src/infra/logger.js';
import { RedisHub } from '../src/infra/redis.js';
import { Secrets } from '../src/infra/secrets.js';
import { until } from './gateway/clients.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger('silent');
const SIGNING_KEY = new Secrets('relay-test-secret-key-0123456789abcdef').replicaKey;
const namespace = () => `toolport-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;

describe('ConfigEvents between replicas', () => {
  it('relays what is emitted here, and delivers what is received after the preparers, without relaying it again', async () => {
    const events = new ConfigEvents();
    const heard: ConfigEvent[] = [];
    const relayed: ConfigEvent[] = [];
    const steps: string[] = [];
    events.on((e) => {
      heard.push(e);
      steps.push(`heard ${e.type}`);
    });
    events.relayTo((e) => relayed.push(e));
    let release: () => void = () => undefined;
    events.beforeReceive((e) =>
      e.type === 'option.changed'
        ? new Promise<void>((resolve) => {
            steps.push('reloading');
            release = () => {
              steps.push('reloaded');
              resolve();
            };
          })
        : undefined,
    );

    events.emit({ type: 'service.changed', serviceId: 1 });
    expect(relayed).toEqual([{ type: 'service.changed', serviceId: 1 }]);

    const option = events.receive({ type: 'option.changed', key: 'TimeZone' });
    const after = events.receive({ type: 'user.changed', userId: 7 });
    await until(() => steps.includes('reloading'), 'the preparer to start');
    // Neither the option nor the event behind it is heard before the reload is done: arrival order holds.
    expect(heard).toHaveLength(1);
    release();
    await Promise.all([option, after]);
    expect(steps).toEqual(['heard service.changed', 'reloading', 'reloaded', 'heard option.changed', 'heard user.changed']);
    expect(relayed).toHaveLength(1);
  });

  it('accepts the four event shapes from another replica and nothing else', () => {
    expect(parseConfigEvent({ type: 'service.changed', serviceId: 3 })).toEqual({ type: 'service.changed', serviceId: 3 });
    expect(parseConfigEvent({ type: 'service.removed', serviceId: 3, extra: 'x' })).toEqual({ type: 'service.removed', serviceId: 3 });
    expect(parseConfigEvent({ type: 'service.reconnect', serviceId: 5 })).toEqual({ type: 'service.reconnect', serviceId: 5 });
    expect(parseConfigEvent({ type: 'user.changed', userId: 4 })).toEqual({ type: 'user.changed', userId: 4 });
    expect(parseConfigEvent({ type: 'option.changed', key: 'TimeZone' })).toEqual({ type: 'option.changed', key: 'TimeZone' });
    for (const bad of [
      null,
      'service.changed',
      { type: 'service.changed', serviceId: '3' },
      { type: 'user.changed' },
      { type: 'service.reconnect' },
      { type: 'shell', cmd: 'rm' },
    ]) {
      expect(parseConfigEvent(bad)).toBeUndefined();
    }
  });
});

describe('RedisHub', () => {
  const hubs: RedisHub[] = [];
  const hub = async (ns: string) => {
    const h = await RedisHub.connect({ url: REDIS_URL, namespace: ns, logger, signingKey: SIGNING_KEY });
    hubs.push(h);
    return h;
  };
  afterEach(async () => {
    await Promise.all(hubs.splice(0).map((h) => h.close()));
  });

  it('refuses to start when Redis cannot be reached', async () => {
    await expect(RedisHub.connect({ url: 'redis://127.0.0.1:1', namespace: 'x:', logger, signingKey: SIGNING_KEY })).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });

  it('relays events to the replicas of its namespace only, never back to their origin', async () => {
    const ns = namespace();
    const [a, b, stranger] = [new ConfigEvents(), new ConfigEvents(), new ConfigEvents()];
    const heard = { a: [] as ConfigEvent[], b: [] as ConfigEvent[], stranger: [] as ConfigEvent[] };
    a.on((e) => heard.a.push(e));
    b.on((e) => heard.b.push(e));
    stranger.on((e) => heard.stranger.push(e));
    const noResync = { run: async () => undefined };
    await EventRelay.start(await hub(ns), a, logger, noResync);
    await EventRelay.start(await hub(ns), b, logger, noResync);
    await EventRelay.start(await hub(namespace()), stranger, logger, noResync);

    a.emit({ type: 'service.changed', serviceId: 5 });
    b.emit({ type: 'user.changed', userId: 6 });
    await until(() => heard.a.length === 2 && heard.b.length === 2, 'both replicas to hear both events');
    expect(heard.a).toEqual([
      { type: 'service.changed', serviceId: 5 },
      { type: 'user.changed', userId: 6 },
    ]);
    expect(heard.b).toEqual([
      { type: 'user.changed', userId: 6 },
      { type: 'service.changed', serviceId: 5 },
    ]);
    // Redis wrote each event to every subscriber of its channel before B read it: another namespace got none.
    expect(heard.stranger).toEqual([]);
  });

  it('hears only messages signed with the deployment’s key for that channel, fresh and once', async () => {
    const ns = namespace();
    const [a, b] = [await hub(ns), await hub(ns)];
    const channel = a.key('test');
    const heard: unknown[] = [];
    await b.subscribe(channel, (m) => heard.push(m));
    // A writer without the key (anyone with access to Redis): a bare message, one signed with another key,
    // a signed one moved to another channel, a stale one, and an exact replay of a good one.
    const intruder = await RedisHub.connect({
      url: REDIS_URL,
      namespace: ns,
      logger,
      signingKey: new Secrets('another-deployment-key-0123456789abcdef').replicaKey,
    });
    hubs.push(intruder);
    const raw: string[] = [];
    const tap = a.client.duplicate();
    await tap.connect();
    await tap.subscribe(channel, (m) => void raw.push(m));
    await a.publish(channel, { n: 1 });
    await until(() => heard.length === 1 && raw.length === 1, 'the signed message');
    const good = raw[0] as string;
    const [at = '', mac = ''] = good.split('.');
    await a.client.publish(channel, JSON.stringify({ n: 2 }));
    await intruder.publish(channel, { n: 3 });
    await a.client.publish(a.key('elsewhere'), good);
    await b.subscribe(a.key('elsewhere'), (m) => heard.push(m));
    await a.client.publish(a.key('elsewhere'), good);
    await a.client.publish(channel, `${Number(at) - 120_000}.${mac}.${JSON.stringify({ n: 1 })}`);
    await a.client.publish(channel, good);
    // A last good one: once it is heard, everything before it was read and dropped.
    await a.publish(channel, { n: 4 });
    await until(() => heard.length >= 2, 'the last signed message');
    expect(heard).toEqual([{ n: 1 }, { n: 4 }]);
    await tap.quit();
  });

  it('tells the replica holding a legacy stream from the session id', async () => {
    const [a, b] = [await hub(namespace()), await hub(namespace())];
    const catalog = {} as ServiceCatalog;
    const relayA = new LegacyRelay(a, catalog, logger);
    const relayB = new LegacyRelay(b, catalog, logger);
    const id = relayA.newSessionId();
    expect(relayA.ownerOf(id)).toBeUndefined();
    expect(relayB.ownerOf(id)).toBe(a.replicaId);
    // Ids of a single instance (no replica part) and malformed ones stay local.
    expect(relayB.ownerOf('AAAAAAAAAAAAAAAAAAAAAA')).toBeUndefined();
    expect(relayB.ownerOf('nonce.not a replica')).toBeUndefined();
    // A forward to a replica nobody listens for is "not taken" at once.
    expect(
      await relayB.forward('ZZZZZZZZZZZZ', '/proxy', { sessionId: 'x.ZZZZZZZZZZZZ', userId: 1, serviceId: 1, messages: [], bytes: 2 }),
    ).toBe(false);
  });
});
