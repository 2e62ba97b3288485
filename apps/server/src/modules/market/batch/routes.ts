import { endpoints, ToolportSettings } from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { route } from '../../../http/endpoints.js';
import { badRequest } from '../../../http/errors.js';
import { ok } from '../../../http/locale.js';
import { type BatchEntry, BatchFormatError, parseBatchConfig, type RepeatedKey, repeatedKeys } from './config.js';
import type { BatchImporter } from './importer.js';
import type { ProgressStreams } from './progress.js';

const FORMAT_ERRORS = {
  not_a_config: 'market.batch_not_a_config',
  empty: 'market.batch_empty',
  too_many: 'market.batch_too_many',
  duplicate_key: 'market.batch_duplicate_key',
} as const;

/**
 * Reads a batch document, or the 400 that says what is wrong with it. Sent as JSON text (as the console
 * and `toolport import` do), a server name given twice is caught; an already-parsed object body has lost
 * its repeated keys to the JSON parser before it gets here.
 */
export function batchEntriesOf(body: unknown): BatchEntry[] {
  return batchDocumentOf(body).entries;
}

/**
 * The entries of a batch document and its `toolport` block (overrides, access and groups), or the
 * 400 that says what is wrong with either.
 */
export function batchDocumentOf(body: unknown): { entries: BatchEntry[]; settings: ToolportSettings | undefined } {
  let doc = body;
  let repeated: RepeatedKey[] = [];
  if (typeof body === 'string') {
    try {
      doc = JSON.parse(body);
    } catch {
      throw badRequest('error.invalid_json');
    }
    repeated = repeatedKeys(body);
  }
  let entries: BatchEntry[];
  try {
    entries = parseBatchConfig(doc, repeated);
  } catch (err) {
    if (err instanceof BatchFormatError) throw badRequest(FORMAT_ERRORS[err.reason], { max: 200, key: err.key });
    throw err;
  }
  const block = (doc as { toolport?: unknown }).toolport;
  if (block === undefined) return { entries, settings: undefined };
  const parsed = ToolportSettings.safeParse(block);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ['toolport', ...(issue?.path ?? [])].join('.');
    throw badRequest('market.batch_settings_invalid', { where, reason: issue?.message ?? '' }, 'settings_invalid');
  }
  return { entries, settings: parsed.data };
}

/** Batch import of an `mcpServers` document, and its progress as an event stream. */
export async function batchRoutes(
  api: ZodApi,
  { importer, streams }: { importer: BatchImporter; streams: ProgressStreams },
): Promise<void> {
  api.addHook('preClose', async () => streams.closeAll());

  route(api, endpoints.market.batchImport, async (req, reply) => {
    const { entries, settings } = batchDocumentOf(req.body);
    const taskId = await importer.start(req.principal, entries, req.locale, settings);
    const total = entries.length + (settings?.groups?.length ?? 0);
    return ok(reply, { task_id: taskId, total }, req.t('market.batch_started', { count: total }));
  });

  // The table marks it an event stream: the handler answers through the reply, and checks the admin's token itself.
  route(api, endpoints.market.batchProgress, async (req, reply) => {
    await streams.admin(req, req.query.token);
    await streams.stream(req, reply, req.params.task_id);
    return reply;
  });
}
