import { type OptionKey, optionKeys } from '@toolport/contract';
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import type { ConfigEvent, ConfigEvents } from './events.js';
import type { RedisHub } from './redis.js';

/** A user changed this long before an outage began is assumed heard of (clocks of replicas differ a little). */
const CLOCK_MARGIN_MS = 60_000;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** A configuration event as another replica published it, checked field by field. */
export function parseConfigEvent(value: unknown): ConfigEvent | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const e = value as Record<string, unknown>;
  switch (e.type) {
    case 'service.changed':
    case 'service.removed':
    case 'service.reconnect':
    case 'tools.changed':
      return isInt(e.serviceId) ? { type: e.type, serviceId: e.serviceId } : undefined;
    case 'user.changed':
      return isInt(e.userId) ? { type: e.type, userId: e.userId } : undefined;
    case 'option.changed':
      return typeof e.key === 'string' ? { type: e.type, key: e.key } : undefined;
    case 'access.changed':
    case 'groups.changed':
      return { type: e.type };
    default:
      return undefined;
  }
}

/**
 * Configuration events between replicas (docs/architecture.md §7): every event emitted here is published on
 * the deployment's `events` channel with this replica's id, and every event another replica
 * published is received here (its own echo is ignored), so a toggle or an edit made through one
 * replica starts or stops processes on all of them. Pub/sub delivers only to those connected: after
 * an outage a replica catches up from the database (`resync`) and asks the others to do the same,
 * since what they published meanwhile may be lost too.
 */
export class EventRelay {
  private stopRelaying: () => void = () => undefined;
  private stopReconnect: () => void = () => undefined;

  private constructor(
    private readonly hub: RedisHub,
    private readonly events: ConfigEvents,
    private readonly logger: Logger,
    private readonly resync: { run(since: number): Promise<void> },
  ) {}

  static async start(
    hub: RedisHub,
    events: ConfigEvents,
    logger: Logger,
    resync: { run(since: number): Promise<void> },
  ): Promise<EventRelay> {
    const relay = new EventRelay(hub, events, logger, resync);
    await hub.subscribe(relay.channel, (m) => relay.onMessage(m));
    relay.stopRelaying = events.relayTo((event) => void hub.publish(relay.channel, { origin: hub.replicaId, event }));
    relay.stopReconnect = hub.onReconnect((since) => {
      void hub.publish(relay.channel, { origin: hub.replicaId, resync: since });
      relay.catchUp(since);
    });
    return relay;
  }

  private get channel(): string {
    return this.hub.key('events');
  }

  private onMessage(raw: unknown): void {
    const message = raw as { origin?: unknown; event?: unknown; resync?: unknown } | null;
    if (typeof message?.origin !== 'string' || message.origin === this.hub.replicaId) return;
    if (isInt(message.resync)) {
      this.catchUp(message.resync);
      return;
    }
    const event = parseConfigEvent(message.event);
    if (!event) return;
    this.events.receive(event).catch((err) => this.logger.error({ err, event }, 'applying a change from another replica failed'));
  }

  private catchUp(since: number): void {
    this.resync.run(since).catch((err) => this.logger.error({ err }, 'catching up on configuration changes after a Redis outage failed'));
  }

  stop(): void {
    this.stopRelaying();
    this.stopReconnect();
  }
}

/**
 * What a replica may have missed while Redis was away, found in the database and delivered to its
 * listeners as if announced: preferences whose value differs from the one held, every service known
 * now or before (a service event is idempotent: a link whose configuration did not change is left
 * running; one whose service is gone is stopped), and the users changed since the outage began.
 */
export interface ResyncDeps {
  db: Db;
  /** The preferences held in memory, read again from the database. */
  options: { get(key: OptionKey): string; load(): Promise<void> };
  events: ConfigEvents;
}

export class ConfigResync {
  /** Services this replica may run: those stored at the last look, and every one an event named since. */
  private known = new Set<number>();

  constructor(private readonly deps: ResyncDeps) {
    deps.events.on((event) => {
      if (event.type === 'service.changed' || event.type === 'service.removed') this.known.add(event.serviceId);
    });
    void this.stored()
      .then((ids) => {
        for (const id of ids) this.known.add(id);
      })
      .catch(() => undefined);
  }

  private async stored(): Promise<number[]> {
    return (await this.deps.db.selectFrom('services').select('id').execute()).map((s) => s.id);
  }

  async run(since: number): Promise<void> {
    const { deps } = this;
    const before = new Map(optionKeys.map((key) => [key, deps.options.get(key)]));
    await deps.options.load();
    const pending: Promise<void>[] = [];
    for (const key of optionKeys)
      if (deps.options.get(key) !== before.get(key)) pending.push(deps.events.receive({ type: 'option.changed', key }));

    const stored = await this.stored();
    for (const serviceId of new Set([...this.known, ...stored])) pending.push(deps.events.receive({ type: 'service.changed', serviceId }));
    const users = await deps.db
      .selectFrom('users')
      .select('id')
      .where('updated_at', '>=', since - CLOCK_MARGIN_MS)
      .execute();
    for (const user of users) pending.push(deps.events.receive({ type: 'user.changed', userId: user.id }));
    await Promise.all(pending);
    // Services gone by now need no further look.
    this.known = new Set(stored);
  }
}
