import { BatchImportResult, BatchProgressParams, BatchProgressQuery, envelope } from '@toolport/contract';
import { z } from 'zod';
import type { ZodApi } from '../../../http/api.js';
import { badRequest } from '../../../http/errors.js';
import { principalOf } from '../../../http/guard.js';
import { ok } from '../../../http/locale.js';
import { type BatchEntry, BatchFormatError, parseBatchConfig } from './config.js';
import type { BatchImporter } from './importer.js';
import type { ProgressStreams } from './progress.js';

const tags = ['market'];

/** The console sends the text as typed: a JSON object, or the same as a string. */
const BatchImportBody = z.union([z.string().max(4 * 1024 * 1024), z.record(z.string(), z.unknown())]);

const FORMAT_ERRORS = {
  not_a_config: 'market.batch_not_a_config',
  empty: 'market.batch_empty',
  too_many: 'market.batch_too_many',
} as const;

/** Reads a batch document, or the 400 that says what is wrong with it. */
export function batchEntriesOf(body: unknown): BatchEntry[] {
  let doc = body;
  if (typeof body === 'string') {
    try {
      doc = JSON.parse(body);
    } catch {
      throw badRequest('error.invalid_json');
    }
  }
  try {
    return parseBatchConfig(doc);
  } catch (err) {
    if (err instanceof BatchFormatError) throw badRequest(FORMAT_ERRORS[err.reason], { max: 200 });
    throw err;
  }
}

/** Batch import of an `mcpServers` document, and its progress as an event stream. */
export async function batchRoutes(
  api: ZodApi,
  { importer, streams }: { importer: BatchImporter; streams: ProgressStreams },
): Promise<void> {
  api.addHook('preClose', async () => streams.closeAll());

  api.post(
    '/mcp_market/batch-import',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Import the servers of an mcpServers document (Claude Desktop, Cursor, Cherry Studio, VS Code `servers`, or a bare map)',
        description:
          'Existing names are skipped; npx / uvx packages are installed. Follow GET /mcp_market/batch-import/progress/{task_id}.',
        body: BatchImportBody,
        response: { 200: envelope(BatchImportResult) },
      },
    },
    async (req, reply) => {
      const entries = batchEntriesOf(req.body);
      const taskId = await importer.start(principalOf(req), entries, req.locale);
      return ok(reply, { task_id: taskId, total: entries.length }, req.t('market.batch_started', { count: entries.length }));
    },
  );

  api.get(
    '/mcp_market/batch-import/progress/:task_id',
    {
      // EventSource cannot send headers: the handler checks the admin's token from `?token=` itself.
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Progress of a batch import as text/event-stream: {name, status, message} events, then {status: "done", summary}',
        description:
          'Authenticated by an admin access token in ?token= (or the Authorization header). A late subscriber receives the whole history.',
        params: BatchProgressParams,
        querystring: BatchProgressQuery,
      },
    },
    async (req, reply) => {
      await streams.admin(req, req.query.token);
      await streams.stream(req, reply, req.params.task_id);
      return reply;
    },
  );
}
