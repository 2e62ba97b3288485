import { endpoints } from '@toolport/contract';
import type { Logger } from 'pino';
import type { Db } from '../../db/db.js';
import type { SemanticRanker } from '../../gateway/index.js';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { FetchLike } from '../../infra/outbound.js';
import type { OptionsService } from '../options/index.js';
import type { ProviderConfig } from './provider.js';
import { EmbeddingsRanker } from './ranker.js';
import { VectorStore } from './vectors.js';

export { PAUSE_AFTER_FAILURE_MS } from './ranker.js';

export interface EmbeddingsDeps {
  db: Db;
  options: Pick<OptionsService, 'get' | 'int'>;
  events: ConfigEvents;
  /** infra/outbound.ts: the provider's URL is the admin's (configuredFetch). */
  fetch: FetchLike;
  logger: Logger;
}

export interface EmbeddingsModule {
  /** The gateway's port for discovery search. */
  ranker: SemanticRanker & { settled(): Promise<void> };
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

const PROVIDER_KEYS = new Set(['EmbeddingsURL', 'EmbeddingsModel', 'EmbeddingsAPIKey', 'EmbeddingsDimensions', 'EmbeddingsTimeoutMs']);

/** The optional embeddings provider of discovery search (Preferences; decision 0046). */
export function createEmbeddingsModule(deps: EmbeddingsDeps): EmbeddingsModule {
  const config = (): ProviderConfig | undefined => {
    const url = deps.options.get('EmbeddingsURL');
    const model = deps.options.get('EmbeddingsModel');
    if (!url || !model) return undefined;
    return {
      url,
      model,
      apiKey: deps.options.get('EmbeddingsAPIKey'),
      dimensions: deps.options.int('EmbeddingsDimensions'),
      timeoutMs: deps.options.int('EmbeddingsTimeoutMs'),
    };
  };
  const store = new VectorStore(deps.db);
  const ranker = new EmbeddingsRanker({ config, store, fetch: deps.fetch, logger: deps.logger });
  const stop = deps.events.on((e) => {
    if (e.type === 'option.changed' && PROVIDER_KEYS.has(e.key)) ranker.reset();
  });
  const status = async () => {
    const { space, ...now } = ranker.status();
    return { ...now, vectors: space ? await store.count(space) : 0 };
  };
  return {
    ranker,
    routes: async (api) => {
      route(api, endpoints.options.embeddings, async (_req, reply) => ok(reply, await status()));
      route(api, endpoints.options.checkEmbeddings, async (_req, reply) => {
        await ranker.check();
        return ok(reply, await status());
      });
    },
    close: async () => stop(),
  };
}
