import type { AuditActorType, AuditEntry, AuditFilter, AuditObjectType, AuditOutcome } from '@toolport/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/db.js';
import type { AuditEntriesTable } from '../../db/schema.js';

/** An entry as it is written; the id and, unless given, the time are the store's. */
export interface NewAuditEntry {
  created_at?: number;
  actor_type: AuditActorType;
  actor_id: number | null;
  actor_name: string;
  address: string;
  action: string;
  object_type: AuditObjectType;
  object_id: string;
  outcome: AuditOutcome;
  via: string;
  /** Already masked (mask.ts). */
  changes: Record<string, unknown>;
}

type Row = Selectable<AuditEntriesTable>;

const clip = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

export const toEntry = (r: Row): AuditEntry => {
  let changes: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(r.changes);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) changes = parsed as Record<string, unknown>;
  } catch {
    changes = {};
  }
  return {
    id: Number(r.id),
    created_at: Number(r.created_at),
    actor_type: r.actor_type as AuditActorType,
    actor_id: r.actor_id === null ? null : Number(r.actor_id),
    actor_name: r.actor_name,
    address: r.address,
    action: r.action,
    object_type: r.object_type as AuditObjectType,
    object_id: r.object_id,
    outcome: r.outcome as AuditOutcome,
    via: r.via,
    changes,
  };
};

/** The audit_entries table (migration 0012): written once per entry, read by filters, purged by age. */
export class AuditRepo {
  constructor(private readonly db: Db) {}

  async insert(e: NewAuditEntry): Promise<AuditEntry> {
    const row = await this.db
      .insertInto('audit_entries')
      .values({
        created_at: e.created_at ?? Date.now(),
        actor_type: e.actor_type,
        actor_id: e.actor_id,
        actor_name: clip(e.actor_name, 128),
        address: clip(e.address, 64),
        action: clip(e.action, 32),
        object_type: e.object_type,
        object_id: clip(e.object_id, 256),
        outcome: e.outcome,
        via: clip(e.via, 256),
        changes: JSON.stringify(e.changes),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toEntry(row);
  }

  /** The filter as SQL conditions (each served by an index of migration 0012). */
  private filtered(f: AuditFilter) {
    let q = this.db.selectFrom('audit_entries');
    if (f.actor !== undefined) {
      const actor = f.actor;
      const id = /^\d{1,10}$/.test(actor) ? Number(actor) : undefined;
      q =
        id !== undefined && id <= 2_147_483_647
          ? q.where((eb) => eb.or([eb('actor_id', '=', id), eb('actor_name', '=', actor)]))
          : q.where('actor_name', '=', actor);
    }
    if (f.object_type !== undefined) q = q.where('object_type', '=', f.object_type);
    if (f.object_id !== undefined) q = q.where('object_id', '=', f.object_id);
    if (f.since !== undefined) q = q.where('created_at', '>=', f.since);
    if (f.until !== undefined) q = q.where('created_at', '<', f.until);
    return q;
  }

  /** Newest first; `page` is 1-based, as in the logs. */
  async page(f: AuditFilter, page: number, pageSize: number): Promise<{ entries: AuditEntry[]; total: number }> {
    const counted = await this.filtered(f)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const total = Number(counted.n);
    const skip = (page - 1) * pageSize;
    if (skip >= total) return { entries: [], total };
    const rows = await this.filtered(f)
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(pageSize)
      .offset(skip)
      .execute();
    return { entries: rows.map(toEntry), total };
  }

  /** Every entry under the filter, oldest first, read a batch at a time (an export of any size). */
  async *all(f: AuditFilter, batch = 500): AsyncGenerator<AuditEntry> {
    let after = 0;
    for (;;) {
      const rows = await this.filtered(f).selectAll().where('id', '>', after).orderBy('id', 'asc').limit(batch).execute();
      for (const r of rows) yield toEntry(r);
      if (rows.length < batch) return;
      after = Number((rows[rows.length - 1] as Row).id);
    }
  }
}
