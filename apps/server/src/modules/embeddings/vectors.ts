import { createHash } from 'node:crypto';
import type { Db } from '../../db/db.js';
import type { SearchableTool } from '../../gateway/index.js';

/** At most this many floats are kept in memory (about 32 MB); past it the memory starts again from the database. */
const MAX_FLOATS = 8_000_000;

/** A tool's version: its name, description and input schema. A new version gets a new vector. */
export function toolHash(tool: SearchableTool): string {
  const hash = createHash('sha256');
  hash.update(tool.name);
  hash.update('\u0000');
  hash.update(typeof tool.description === 'string' ? tool.description : '');
  hash.update('\u0000');
  hash.update(JSON.stringify(tool.inputSchema ?? null) ?? '');
  return hash.digest('base64url');
}

/** What is embedded of a tool: its name, description and parameters, as a model reads them. */
export function toolText(tool: SearchableTool): string {
  const schema = tool.inputSchema as { properties?: Record<string, { description?: unknown }> } | undefined;
  const params = Object.entries(schema?.properties ?? {})
    .map(([name, p]) => (typeof p?.description === 'string' ? `${name} (${p.description})` : name))
    .join(', ');
  const text = `${tool.name}: ${typeof tool.description === 'string' ? tool.description : ''}${params ? `\nParameters: ${params}` : ''}`;
  return text.slice(0, 4000);
}

/** An embeddings space: vectors of one provider URL, model and size are comparable with each other only. */
export function spaceOf(url: string, model: string, dimensions: number): string {
  return createHash('sha256').update(`${url}\u0000${model}\u0000${dimensions}`).digest('base64url').slice(0, 43);
}

/** Tool vectors by space and tool version: in the database (migration 0010), the ones in use also in memory. */
export class VectorStore {
  private readonly memory = new Map<string, Float32Array>();
  private floats = 0;

  constructor(private readonly db: Db) {}

  /** The vectors of these tool versions that exist, from memory, else read in one query. */
  async get(space: string, hashes: readonly string[]): Promise<(Float32Array | undefined)[]> {
    const wanted = [...new Set(hashes.filter((h) => !this.memory.has(`${space}:${h}`)))];
    for (let i = 0; i < wanted.length; i += 500) {
      const rows = await this.db
        .selectFrom('tool_embeddings')
        .select(['tool_hash', 'vector'])
        .where('space', '=', space)
        .where('tool_hash', 'in', wanted.slice(i, i + 500))
        .execute();
      for (const row of rows) this.remember(space, row.tool_hash, decode(row.vector));
    }
    return hashes.map((h) => this.memory.get(`${space}:${h}`));
  }

  async put(space: string, vectors: readonly { hash: string; vector: Float32Array }[]): Promise<void> {
    if (vectors.length === 0) return;
    const now = Date.now();
    await this.db
      .insertInto('tool_embeddings')
      .values(
        vectors.map(({ hash, vector }) => ({ space, tool_hash: hash, dimensions: vector.length, vector: encode(vector), created_at: now })),
      )
      .onConflict((oc) => oc.columns(['space', 'tool_hash']).doNothing())
      .execute();
    for (const { hash, vector } of vectors) this.remember(space, hash, vector);
  }

  async count(space: string): Promise<number> {
    const row = await this.db
      .selectFrom('tool_embeddings')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('space', '=', space)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  private remember(space: string, hash: string, vector: Float32Array): void {
    if (this.floats + vector.length > MAX_FLOATS) {
      this.memory.clear();
      this.floats = 0;
    }
    this.memory.set(`${space}:${hash}`, vector);
    this.floats += vector.length;
  }
}

const encode = (v: Float32Array): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');

function decode(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  // A copy: the Buffer's memory may be a shared pool at an offset Float32Array cannot start at.
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
