import type { EmbeddingsStatus } from '@toolport/contract';
import type { Logger } from 'pino';
import type { SearchableTool, SemanticRanker, SemanticRanking } from '../../gateway/index.js';
import type { FetchLike } from '../../infra/outbound.js';
import { EmbeddingsFailure, embed, type ProviderConfig } from './provider.js';
import { spaceOf, toolHash, toolText, type VectorStore } from './vectors.js';

/** After a failure the provider is not asked again for this long: searches rank lexically at once meanwhile. */
export const PAUSE_AFTER_FAILURE_MS = 30_000;
/** Tool texts per request while vectors are computed, and how long such a request may take. */
const BATCH = 32;
const BATCH_TIMEOUT_MS = 60_000;
const QUERY_CACHE = 500;

/**
 * Discovery's semantic ranking through an embeddings provider (decision 0046). A tool's vector is
 * computed once per tool version and space, in the background, and stored; a search asks only for its
 * query's vector, within the admin's bound, and ranks by cosine in process. Whenever the provider is
 * not set, slow, failing, or the vectors are not all there yet, the search is told at once and stays
 * lexical; a change of state is logged with its reason and shown in Preferences.
 */
export class EmbeddingsRanker implements SemanticRanker {
  private state: Omit<EmbeddingsStatus, 'vectors' | 'model' | 'dimensions'> & { dimensions: number | null } = {
    state: 'unknown',
    reason: null,
    detail: '',
    checked_at: null,
    dimensions: null,
  };
  private pausedUntil = 0;
  /** Tool versions whose vectors are being computed, by space. */
  private readonly filling = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private readonly queries = new Map<string, Float32Array>();
  private readonly hashes = new WeakMap<object, string>();

  constructor(
    private readonly deps: {
      config: () => ProviderConfig | undefined;
      store: VectorStore;
      fetch: FetchLike;
      logger: Logger;
    },
  ) {}

  async rank(tools: readonly SearchableTool[], query: string): Promise<SemanticRanking> {
    const config = this.deps.config();
    if (!config) return { unavailable: 'no embeddings provider is set', off: true };
    if (Date.now() < this.pausedUntil)
      return { unavailable: `the embeddings provider is failing (${this.state.reason}): ${this.state.detail}` };
    const space = spaceOf(config.url, config.model, config.dimensions);
    const hashes = tools.map((t) => this.hashOf(t));
    const vectors = await this.deps.store.get(space, hashes);
    const missing = tools.filter((_, i) => !vectors[i]);
    if (missing.length > 0) {
      this.fill(config, space, missing);
      return { unavailable: `tool vectors are being computed: ${tools.length - missing.length} of ${tools.length} ready` };
    }
    let q: Float32Array;
    try {
      q = await this.queryVector(config, query);
    } catch (err) {
      return { unavailable: this.failed(err) };
    }
    const similarity = vectors.map((v) => dot(q, v as Float32Array));
    const order = similarity.map((_, i) => i).sort((a, b) => (similarity[b] as number) - (similarity[a] as number) || a - b);
    return { order, confidence: standOut(similarity, similarity[order[0] as number] ?? 0) };
  }

  /** Asks the provider for one vector now (Preferences' check): the status it leaves. */
  async check(): Promise<void> {
    const config = this.deps.config();
    if (!config) return;
    try {
      await this.ask(config, ['Toolport embeddings check'], config.timeoutMs);
    } catch (err) {
      this.failed(err);
    }
  }

  status(): Omit<EmbeddingsStatus, 'vectors'> & { space?: string } {
    const config = this.deps.config();
    if (!config) return { state: 'off', reason: null, detail: '', checked_at: null, model: '', dimensions: null };
    return { ...this.state, model: config.model, space: spaceOf(config.url, config.model, config.dimensions) };
  }

  /** A change of the provider's preferences starts afresh: a failure of the old one no longer holds. */
  reset(): void {
    this.pausedUntil = 0;
    this.queries.clear();
    this.state = { state: 'unknown', reason: null, detail: '', checked_at: null, dimensions: null };
  }

  private hashOf(tool: SearchableTool): string {
    let hash = this.hashes.get(tool);
    if (!hash) {
      hash = toolHash(tool);
      this.hashes.set(tool, hash);
    }
    return hash;
  }

  private async queryVector(config: ProviderConfig, query: string): Promise<Float32Array> {
    const key = `${spaceOf(config.url, config.model, config.dimensions)}\u0000${query}`;
    const known = this.queries.get(key);
    if (known) return known;
    const [vector] = await this.ask(config, [query], config.timeoutMs);
    if (this.queries.size >= QUERY_CACHE) this.queries.delete(this.queries.keys().next().value as string);
    this.queries.set(key, vector as Float32Array);
    return vector as Float32Array;
  }

  private async ask(config: ProviderConfig, texts: string[], timeoutMs: number): Promise<Float32Array[]> {
    const vectors = await embed(this.deps.fetch, config, texts, timeoutMs);
    if (this.state.state !== 'ok')
      this.deps.logger.info({ model: config.model }, 'embeddings provider answers: discovery search is hybrid');
    this.state = { state: 'ok', reason: null, detail: '', checked_at: Date.now(), dimensions: vectors[0]?.length ?? null };
    return vectors;
  }

  /** Records a failure (logged when the state changes) and pauses the provider; the reason, for the caller. */
  private failed(err: unknown): string {
    const failure = err instanceof EmbeddingsFailure ? err : new EmbeddingsFailure('network', String(err));
    if (this.state.state !== 'failing' || this.state.detail !== failure.detail)
      this.deps.logger.warn(
        { reason: failure.reason, detail: failure.detail },
        'embeddings provider failed: discovery search falls back to lexical',
      );
    this.state = { ...this.state, state: 'failing', reason: failure.reason, detail: failure.detail, checked_at: Date.now() };
    this.pausedUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
    return `the embeddings provider is failing (${failure.reason}): ${failure.detail}`;
  }

  /** Computes the missing vectors in the background, one batch after another; a tool already queued is not queued again. */
  private fill(config: ProviderConfig, space: string, tools: readonly SearchableTool[]): void {
    const fresh = tools.filter((t) => !this.filling.has(`${space}:${this.hashOf(t)}`));
    if (fresh.length === 0) return;
    for (const t of fresh) this.filling.add(`${space}:${this.hashOf(t)}`);
    this.queue = this.queue.then(async () => {
      try {
        for (let i = 0; i < fresh.length; i += BATCH) {
          if (Date.now() < this.pausedUntil) return;
          const batch = fresh.slice(i, i + BATCH);
          const vectors = await this.ask(config, batch.map(toolText), BATCH_TIMEOUT_MS);
          await this.deps.store.put(
            space,
            batch.map((t, j) => ({ hash: this.hashOf(t), vector: vectors[j] as Float32Array })),
          );
        }
      } catch (err) {
        this.failed(err);
      } finally {
        for (const t of fresh) this.filling.delete(`${space}:${this.hashOf(t)}`);
      }
    });
  }

  /** Resolves when the vectors asked for so far are computed (or failed): tests and the benchmark wait on it. */
  settled(): Promise<void> {
    return this.queue;
  }
}

/**
 * How far `best` lies above the bulk of `values`, in robust standard deviations (median and median
 * absolute deviation): a cluster of tools that all fit the query does not hide that they stand out.
 */
function standOut(values: readonly number[], best: number): number {
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  const m = median([...values]);
  const spread = 1.4826 * median(values.map((v) => Math.abs(v - m)));
  return spread > 0 ? (best - m) / spread : 0;
}

function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return -1;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}
