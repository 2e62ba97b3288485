import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbHandle, type Engine, migrateToLatest, openDatabase } from '../src/db/db.js';
import { DiscoverySearch } from '../src/gateway/downstream/group-discovery.js';
import { ConfigEvents } from '../src/infra/events.js';
import { configuredFetch } from '../src/infra/outbound.js';
import { createEmbeddingsModule } from '../src/modules/embeddings/index.js';
import { type FakeEmbeddings, startFakeEmbeddings } from './fake-embeddings.js';
import { createPgDatabase } from './harness.js';
import { evalQueries, evalTools, measure, namespaced, type QueryKind } from './tool-search-eval.js';

const KINDS: QueryKind[] = ['plain', 'paraphrase', 'chinese'];

/** A logger that keeps what the embeddings module says. */
function listening() {
  const lines: { level: string; obj: object; msg: string }[] = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return { lines, logger: { warn: at('warn'), info: at('info'), debug: at('debug') } as unknown as Logger };
}

/**
 * The embeddings module on both database engines, with the fake provider on loopback: vectors stored
 * once per tool version, the fallback's reason in the log, and what hybrid ranking adds on the
 * evaluation set (decision 0046; docs/performance.md).
 */
describe.each(['sqlite', 'postgres'] as Engine[])('the embeddings module on %s', (engine) => {
  let fake: FakeEmbeddings;
  let handle: DbHandle;
  let dispose: () => Promise<void>;
  const settings: Record<string, string> = {};
  const options = { get: (key: string) => settings[key] ?? '', int: (key: string) => Number(settings[key] ?? 0) };
  const events = new ConfigEvents();

  beforeAll(async () => {
    fake = await startFakeEmbeddings();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-embed-'));
    const pg = engine === 'postgres' ? await createPgDatabase() : undefined;
    handle = openDatabase({ databaseUrl: pg?.url, dataDir });
    await migrateToLatest(handle.db);
    dispose = async () => {
      await handle.db.destroy();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    };
    Object.assign(settings, {
      EmbeddingsURL: fake.url,
      EmbeddingsModel: 'fake-hashing',
      EmbeddingsAPIKey: 'k',
      EmbeddingsDimensions: '512',
      EmbeddingsTimeoutMs: '5000',
    });
  });
  afterAll(async () => {
    await dispose?.();
    await fake?.close();
  });

  const build = (logger: Logger) =>
    createEmbeddingsModule({ db: handle.db, options: options as never, events, fetch: configuredFetch, logger });

  it('stores each tool version’s vector once, and logs why it falls back', async () => {
    const log = listening();
    const embeddings = build(log.logger);
    const tools = namespaced(evalTools).slice(0, 40);
    expect(await embeddings.ranker.rank(tools, 'read a file')).toEqual({ unavailable: 'tool vectors are being computed: 0 of 40 ready' });
    await embeddings.ranker.settled();
    const ranked = await embeddings.ranker.rank(tools, 'read a file');
    expect('order' in ranked && ranked.order).toHaveLength(40);
    const rows = await handle.db.selectFrom('tool_embeddings').select(['tool_hash', 'dimensions']).execute();
    expect(rows).toHaveLength(40);
    expect(rows.every((r) => r.dimensions === 512)).toBe(true);

    // Another module (a restart, another replica) on the same database asks for no tool vector again.
    const again = build(listening().logger);
    const before = fake.requests.length;
    expect('order' in (await again.ranker.rank(tools, 'write a file'))).toBe(true);
    expect(fake.requests.slice(before).map((r) => r.input)).toEqual([['write a file']]);
    // A changed description is a new version: one new vector.
    const changed = tools.map((t, i) => (i === 0 ? { ...t, description: `${t.description} (changed)` } : t));
    await again.ranker.rank(changed, 'write a file');
    await again.ranker.settled();
    expect(await handle.db.selectFrom('tool_embeddings').select('tool_hash').execute()).toHaveLength(41);

    fake.mode.status = 500;
    const down = await embeddings.ranker.rank(tools, 'something never asked before');
    expect(down).toEqual({
      unavailable: 'the embeddings provider is failing (http): HTTP 500: {"error":{"message":"provider unavailable"}}',
    });
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => [l.msg, l.obj])).toEqual([
      [
        'embeddings provider failed: discovery search falls back to lexical',
        { reason: 'http', detail: 'HTTP 500: {"error":{"message":"provider unavailable"}}' },
      ],
    ]);
    fake.mode.status = 200;
    await embeddings.close();
    await again.close();
  });

  it('adds to lexical ranking on the evaluation set what a hashing model can (reported, with floors)', async () => {
    const embeddings = build(listening().logger);
    const search = new DiscoverySearch(embeddings.ranker);
    const lexicalOnly = new DiscoverySearch();
    const list = namespaced(evalTools);
    const ctx = (query: string) => ({ query, limit: 20, separator: '__', members: [], locale: 'en' as const });
    await search.answer(list, ctx('warm up'));
    await embeddings.ranker.settled();
    const names = async (s: DiscoverySearch, q: string) => {
      const answer = (JSON.parse(await s.answer(list, ctx(q))) as { structuredContent: unknown }).structuredContent as {
        tools: { name: string }[];
        mode: string;
      };
      if (s === search && answer.mode === 'hybrid') fused += 1;
      return answer.tools.map((t) => t.name);
    };
    let fused = 0;
    const rows: string[] = [];
    for (const kind of KINDS) {
      const subset = evalQueries.filter((q) => q.kind === kind);
      const hybrid = new Map<string, string[]>();
      const lexical = new Map<string, string[]>();
      for (const q of subset) {
        hybrid.set(q.query, await names(search, q.query));
        lexical.set(q.query, await names(lexicalOnly, q.query));
      }
      const h = measure((q) => hybrid.get(q) ?? [], subset);
      const l = measure((q) => lexical.get(q) ?? [], subset);
      rows.push(
        `${kind}: hybrid ${h.recall1.toFixed(3)} / ${h.recall5.toFixed(3)} / ${h.mrr.toFixed(3)}, lexical ${l.recall1.toFixed(3)} / ${l.recall5.toFixed(3)} / ${l.mrr.toFixed(3)}`,
      );
      // A hashing model knows no synonyms: fusion must not cost the lexical ranking much.
      expect(h.recall5, kind).toBeGreaterThanOrEqual(l.recall5 - 0.15);
    }
    console.log(`hybrid with the fake hashing provider (recall@1 / recall@5 / MRR), ${fused} queries fused:\n  ${rows.join('\n  ')}`);
    // Its confident answers (words the query shares with a tool) do take part.
    expect(fused).toBeGreaterThan(40);
    await embeddings.close();
  });
});
