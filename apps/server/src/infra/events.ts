import { EventEmitter } from 'node:events';

/**
 * Configuration change events: the admin API emits, the gateway listens (docs/architecture.md §2). In one
 * process this is an emitter; with REDIS_URL the same events are also relayed between replicas
 * (infra/event-relay.ts): what is emitted here is published, what another replica emitted arrives
 * through `receive`.
 */
export type ConfigEvent =
  | { type: 'service.changed'; serviceId: number }
  | { type: 'service.removed'; serviceId: number }
  /**
   * An administrator asked to reconnect a service: every replica restarts its links of it. The replica asked
   * does so itself and announces it to the others only (`announce`).
   */
  | { type: 'service.reconnect'; serviceId: number }
  | { type: 'user.changed'; userId: number }
  | { type: 'option.changed'; key: string }
  /** A tool override of the service changed (issue 17): lists leaving the gateway change with it. */
  | { type: 'tools.changed'; serviceId: number }
  /** Who may use a service or a group changed (issue 17). */
  | { type: 'access.changed' }
  /** A group was created, edited or deleted (issue 17): its face re-reads it, its clients re-list. */
  | { type: 'groups.changed' };

export class ConfigEvents {
  private readonly emitter = new EventEmitter();
  private relay: ((event: ConfigEvent) => void) | undefined;
  private readonly preparers: ((event: ConfigEvent) => Promise<void> | undefined)[] = [];
  private incoming: Promise<void> = Promise.resolve();

  constructor() {
    this.emitter.setMaxListeners(100);
  }

  /** A change made in this process: its listeners hear it now, the other replicas through the relay. */
  emit(event: ConfigEvent): void {
    this.emitter.emit('event', event);
    this.relay?.(event);
  }

  /** Something this process has done itself, for the other replicas only: its own listeners do not hear it. */
  announce(event: ConfigEvent): void {
    this.relay?.(event);
  }

  on(listener: (event: ConfigEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  /** Where locally emitted events are sent on to the other replicas. */
  relayTo(publish: (event: ConfigEvent) => void): () => void {
    this.relay = publish;
    return () => {
      if (this.relay === publish) this.relay = undefined;
    };
  }

  /**
   * Work that must be done before an event from elsewhere reaches the listeners: what this process
   * holds in memory and the other replica changed in the database (the preferences) is reloaded.
   */
  beforeReceive(prepare: (event: ConfigEvent) => Promise<void> | undefined): void {
    this.preparers.push(prepare);
  }

  /**
   * A change made by another replica (or found after an outage): delivered to the listeners here,
   * in arrival order, once the preparers are done, and not relayed again.
   */
  receive(event: ConfigEvent): Promise<void> {
    const delivered = this.incoming.then(async () => {
      for (const prepare of this.preparers) await prepare(event);
      this.emitter.emit('event', event);
    });
    // A failed reload or listener must not stop the events that follow.
    this.incoming = delivered.catch(() => undefined);
    return delivered;
  }
}
