import { readFileSync } from 'node:fs';
import { Role } from '@toolport/contract';
import { buildApp } from '../../../app.js';
import { CliUsageError, parseCommand } from '../../../cli/args.js';
import { AppError } from '../../../http/errors.js';
import { toPrincipal } from '../../../http/principals.js';
import { translate } from '../../../i18n/index.js';
import { openRuntime } from '../../../runtime.js';
import { createServiceRows, createServicesModule } from '../../services/index.js';
import { createMarketModule, createMarketSources } from '../index.js';
import type { BatchSummary } from './importer.js';
import { batchEntriesOf } from './routes.js';

export interface MarketCommandIo {
  /** The environment the configuration is read from (tests pass their own). */
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
}

const MARK = { success: '+', skipped: '=', failed: '!' } as const;

/**
 * `toolport import <file>`: the batch import of the API, run against the configured database and
 * DATA_DIR without a listening server, as the super admin. Installs complete their handshake here;
 * a running server picks the new services up on their first request (or at its next start).
 */
export async function runImportCommand(args: string[], io: MarketCommandIo = {}): Promise<BatchSummary> {
  const { positionals } = parseCommand(args, {});
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) throw new CliUsageError('expected: toolport import <mcpServers.json>');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliUsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let entries: ReturnType<typeof batchEntriesOf>;
  try {
    entries = batchEntriesOf(text);
  } catch (err) {
    if (err instanceof AppError) throw new CliUsageError(`${file}: ${translate('en', err.key, err.params)}`);
    throw err;
  }
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));

  const rt = await openRuntime(io.env ?? process.env);
  const built = await buildApp({ ...rt, print }).catch(async (err) => {
    await rt.database.db.destroy();
    throw err;
  });
  const { ctx } = built;
  const { db, config, logger, secrets, events, serviceLog, gateway } = ctx;
  // Installs of this command run here, beside the app's own modules; no sweep, no replica installs.
  const rows = createServiceRows({ db, events });
  const services = createServicesModule({ db, secrets, events, options: ctx.options, serviceLog, rows, catalog: ctx.catalog, gateway });
  const market = createMarketModule({
    db,
    config,
    logger,
    secrets,
    events,
    serviceLog,
    metrics: ctx.metrics,
    leader: ctx.leader,
    principals: ctx.principals,
    services,
    sources: createMarketSources(config, logger),
    replicaInstalls: undefined,
    gateway,
  });
  try {
    const root = await ctx.db.selectFrom('users').selectAll().where('role', '>=', Role.SuperAdmin).orderBy('id').executeTakeFirstOrThrow();
    print(`Importing ${entries.length} servers from ${file}`);
    const summary = await market.batch.importAll(toPrincipal(root), entries, 'en', (event) => {
      if (event.status !== 'done') print(`${MARK[event.status]} ${event.name}: ${event.message}`);
    });
    print(`Done: ${summary.success} imported, ${summary.skipped} skipped, ${summary.failed} failed`);
    return summary;
  } finally {
    await market.close();
    await services.close();
    await built.app.close();
    await rt.database.db.destroy();
  }
}
