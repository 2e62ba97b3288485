import { secretOptionKeys } from '@toolport/contract';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Secrets } from '../infra/secrets.js';

/**
 * Re-encryption of every value stored with `Secrets.encrypt` (docs/operations.md, "Secrets and
 * rotation"). It runs on one connection inside a transaction the caller opened, so that either every
 * value is under the new key or nothing changed: each value is decrypted with the current key first
 * (one that does not decrypt stops everything), written back under the new key, and read back and
 * checked against the new key before the caller commits.
 */

/** One column holding `Secrets.encrypt` output, with the columns that find its row. */
export interface SealedColumn {
  table: keyof Database & string;
  column: string;
  keys: string[];
  /** Rows of the table that hold encrypted values in that column (beyond being non-empty). */
  only?: () => RawBuilder<unknown>;
  /** What an operator reads in the summary, singular and plural. */
  what: [string, string];
}

/** Every encrypted column of the schema. A new one must be added here (rotate.test.ts checks the seeded database for others). */
export const SEALED_COLUMNS: SealedColumn[] = [
  { table: 'users', column: 'api_key_enc', keys: ['id'], what: ['API key copy', 'API key copies'] },
  { table: 'services', column: 'env_enc', keys: ['id'], what: ['service variable set', 'service variable sets'] },
  { table: 'services', column: 'headers_enc', keys: ['id'], what: ['service header set', 'service header sets'] },
  {
    table: 'service_user_envs',
    column: 'env_enc',
    keys: ['service_id', 'user_id'],
    what: ['personal variable set', 'personal variable sets'],
  },
  {
    table: 'options',
    column: 'value',
    keys: ['key'],
    only: () =>
      sql`${sql.ref('key')} in (${sql.join(
        secretOptionKeys.map((k) => sql.lit(k)),
        sql`, `,
      )})`,
    what: ['OAuth client secret', 'OAuth client secrets'],
  },
  { table: 'oauth_states', column: 'code_verifier_enc', keys: ['state_hash'], what: ['sign-in in progress', 'sign-ins in progress'] },
  // An OpenID Connect provider's tokens, kept for deprovisioning at refresh (migration 0014).
  {
    table: 'provider_identities',
    column: 'refresh_token_enc',
    keys: ['id'],
    what: ['sign-in provider refresh token', 'sign-in provider refresh tokens'],
  },
  {
    table: 'provider_identities',
    column: 'access_token_enc',
    keys: ['id'],
    what: ['sign-in provider access token', 'sign-in provider access tokens'],
  },
  // Toolport as OAuth client of remote services (migration 0007).
  {
    table: 'upstream_oauth_services',
    column: 'client_secret_enc',
    keys: ['service_id'],
    what: ['upstream OAuth client secret', 'upstream OAuth client secrets'],
  },
  {
    table: 'upstream_oauth_tokens',
    column: 'access_token_enc',
    keys: ['service_id', 'owner_id'],
    what: ['upstream OAuth access token', 'upstream OAuth access tokens'],
  },
  {
    table: 'upstream_oauth_tokens',
    column: 'refresh_token_enc',
    keys: ['service_id', 'owner_id'],
    what: ['upstream OAuth refresh token', 'upstream OAuth refresh tokens'],
  },
  {
    table: 'upstream_oauth_states',
    column: 'code_verifier_enc',
    keys: ['state_hash'],
    what: ['upstream OAuth authorization in progress', 'upstream OAuth authorizations in progress'],
  },
];

/** A problem the operator can act on; nothing was changed. */
export class RotationError extends Error {}

export interface RotationCount {
  column: SealedColumn;
  count: number;
}

export interface RotationHooks {
  /** Runs after every value was written under the new key, before the check (tests make a failure here). */
  afterReencrypt?: (conn: Kysely<Database>) => Promise<void>;
}

type Row = Record<string, unknown> & { sealed: string };

const where = (c: SealedColumn, row: Record<string, unknown>) =>
  sql.join(
    c.keys.map((k) => sql`${sql.ref(k)} = ${row[k]}`),
    sql` and `,
  );

async function rowsOf(conn: Kysely<Database>, c: SealedColumn, limit?: number): Promise<Row[]> {
  const filter = c.only ? sql` and ${c.only()}` : sql``;
  const order = sql.join(c.keys.map((k) => sql.ref(k)));
  const first = limit === undefined ? sql`` : sql` limit ${sql.lit(limit)}`;
  const { rows } = await sql<Row>`select ${sql.join(c.keys.map((k) => sql.ref(k)))}, ${sql.ref(c.column)} as sealed
    from ${sql.table(c.table)} where ${sql.ref(c.column)} <> ''${filter} order by ${order}${first}`.execute(conn);
  return rows;
}

const rowId = (c: SealedColumn, row: Record<string, unknown>) => c.keys.map((k) => String(row[k])).join('/');
/** Where a value is, for messages: the table, column and row keys (option names and ids, never a value). */
const placeOf = (c: SealedColumn, row: Record<string, unknown>) =>
  `${c.table}.${c.column} (${c.keys.map((k) => `${k} ${c.table === 'oauth_states' || c.table === 'upstream_oauth_states' ? '…' : String(row[k])}`).join(', ')})`;

const opens = (secrets: Secrets, sealed: string): string | undefined => {
  try {
    return secrets.decrypt(sealed);
  } catch {
    return undefined;
  }
};

/**
 * Where the first stored value that `secrets` cannot open is (the first value of each encrypted column is
 * tried), or undefined when they open or nothing is stored yet. The server checks this at start (decision 0042).
 */
export async function firstUnopenedValue(conn: Kysely<Database>, secrets: Secrets): Promise<string | undefined> {
  for (const c of SEALED_COLUMNS) {
    const [row] = await rowsOf(conn, c, 1);
    if (row && opens(secrets, row.sealed) === undefined) return placeOf(c, row);
  }
  return undefined;
}

/**
 * Re-encrypts every sealed value from `from` to `to` on `conn`, which must be inside a transaction
 * the caller commits only when this returns (and rolls back when it throws).
 */
export async function reencryptAll(
  conn: Kysely<Database>,
  from: Secrets,
  to: Secrets,
  hooks: RotationHooks = {},
): Promise<RotationCount[]> {
  const plain = new Map<SealedColumn, Map<string, string>>();
  const unreadable: string[] = [];
  let newKeyOpens = 0;
  let total = 0;
  for (const c of SEALED_COLUMNS) {
    const values = new Map<string, string>();
    for (const row of await rowsOf(conn, c)) {
      total += 1;
      const value = opens(from, row.sealed);
      if (value === undefined) {
        unreadable.push(placeOf(c, row));
        if (opens(to, row.sealed) !== undefined) newKeyOpens += 1;
      } else {
        values.set(rowId(c, row), value);
      }
    }
    plain.set(c, values);
  }
  if (unreadable.length > 0) {
    if (newKeyOpens === total) {
      throw new RotationError(
        'every stored value is already encrypted with the new key: nothing to rotate (start the server with the new key)',
      );
    }
    const shown = unreadable.slice(0, 5).join(', ');
    const more = unreadable.length > 5 ? ` and ${unreadable.length - 5} more` : '';
    throw new RotationError(
      unreadable.length === total
        ? 'the current key does not decrypt the stored values: it is not the key this database was encrypted with'
        : `the current key does not decrypt ${unreadable.length} of ${total} stored values: ${shown}${more}. Nothing was changed; clear or re-enter those values with the server running, then rotate`,
    );
  }

  for (const c of SEALED_COLUMNS) {
    for (const row of await rowsOf(conn, c)) {
      const value = plain.get(c)?.get(rowId(c, row)) as string;
      await sql`update ${sql.table(c.table)} set ${sql.ref(c.column)} = ${to.encrypt(value)} where ${where(c, row)}`.execute(conn);
    }
  }
  await hooks.afterReencrypt?.(conn);

  // The check reads everything back: every value there, each one opening with the new key to what it was.
  const counts: RotationCount[] = [];
  for (const c of SEALED_COLUMNS) {
    const expected = plain.get(c) ?? new Map<string, string>();
    const rows = await rowsOf(conn, c);
    const wrong = rows.filter((row) => opens(to, row.sealed) !== expected.get(rowId(c, row)));
    if (wrong.length > 0 || rows.length !== expected.size) {
      const where = wrong[0] ? placeOf(c, wrong[0]) : `${c.table}.${c.column}`;
      throw new RotationError(`the check after re-encrypting failed at ${where}: nothing was changed`);
    }
    counts.push({ column: c, count: rows.length });
  }
  return counts;
}

/** "3 API key copies, 1 service variable set, …" (kinds with none left out). */
export function describeCounts(counts: RotationCount[]): string {
  const parts = counts.filter((c) => c.count > 0).map((c) => `${c.count} ${c.column.what[c.count === 1 ? 0 : 1]}`);
  return parts.length > 0 ? parts.join(', ') : 'no values';
}
