import { readFileSync } from 'node:fs';
import { Role } from '@toolport/contract';
import { buildInstalling } from '../../../build/catalog.js';
import { type Core, withCore } from '../../../build/core.js';
import { CliUsageError, parseCommand } from '../../../cli/args.js';
import { createHealthProbe } from '../../../gateway/index.js';
import { AppError } from '../../../http/errors.js';
import { Principals, toPrincipal } from '../../../http/principals.js';
import { translate } from '../../../i18n/index.js';
import { Leader } from '../../../infra/leader.js';
import { Metrics } from '../../../infra/metrics.js';
import { ServiceLog } from '../../../infra/service-log.js';
import { bodyFieldsOf, createCommandAudit } from '../../audit/index.js';
import { createRefreshTokens } from '../../auth/index.js';
import { createExposurePorts, createExposureTransfer } from '../../exposure/index.js';
import { createServiceCatalog, createServiceRows } from '../../services/index.js';
import { createUsersModule } from '../../users/index.js';
import { createMarketSources } from '../index.js';
import type { BatchSummary } from './importer.js';
import { batchDocumentOf } from './routes.js';

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
  let entries: ReturnType<typeof batchDocumentOf>;
  try {
    entries = batchDocumentOf(text);
  } catch (err) {
    if (err instanceof AppError) throw new CliUsageError(`${file}: ${translate('en', err.key, err.params)}`);
    throw err;
  }
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));

  return withCore(io.env, async (core) => {
    const summary = await importEntries(core, file, entries, print);
    // The document as the file has it, its secrets masked by the trail (decision 0049).
    await createCommandAudit(core.db).command({
      command: 'toolport import',
      action: 'import',
      object: 'import',
      id: file,
      changes: { file, document: bodyFieldsOf(text), summary },
    });
    return summary;
  });
}

/**
 * Builds on the core (build/core.ts) what installing needs and nothing more: users (for the super admin), and
 * the services and market modules through the server's builder (build/catalog.ts `buildInstalling`), with the
 * gateway's one-off health probe as their gateway port and no replica installs, each registered on the core's
 * lifecycle, which closes them (and is never started: no interrupted install task is recovered here). No HTTP
 * server, no upstream pool: no enabled service starts, and each new one runs only for its install's health check.
 * Without Redis relaying events, a running server picks the new services up on their first request.
 */
async function importEntries(
  core: Core,
  file: string,
  { entries, settings }: ReturnType<typeof batchDocumentOf>,
  print: (line: string) => void,
): Promise<BatchSummary> {
  const { config, logger, db, secrets, events, remote, lifecycle } = core;
  const options = core.options.service;
  const serviceLog = new ServiceLog(db, logger);
  // The install logs reach the database before it closes.
  lifecycle.add({ name: 'service log', close: () => serviceLog.flush() });
  const users = createUsersModule({ db, refreshTokens: createRefreshTokens(db), secrets, events, config, logger });
  lifecycle.add({ name: 'users', close: () => users.close() });
  // A fresh DATA_DIR gets its super admin here as at a first start, so the import has someone to run as.
  await users.ensureSuperAdmin(print);
  const catalog = createServiceCatalog({ db, users: users.repo, secrets, events });
  const metrics = new Metrics();
  const leader = Leader.solo({ logger });
  lifecycle.add({ name: 'leader', close: () => leader.close() });
  const probe = createHealthProbe({ catalog, serviceLog, options, logger, config, metrics, remoteFetch: remote.fetch });
  lifecycle.add({ name: 'health probe', close: () => probe.close() });
  const { market } = buildInstalling({
    ...{ config, db, logger, secrets, events, lifecycle, remote, serviceLog, metrics, leader, options },
    ...{ catalog, rows: createServiceRows({ db, events }), sources: createMarketSources(config, logger) },
    principals: new Principals(users.repo, events),
    gateway: probe,
    // Overrides and access travel; groups need the gateway's live tool lists, so this command skips them (and says so).
    transfer: createExposureTransfer({ ports: createExposurePorts({ db, events }), events }),
  });
  const root = await db.selectFrom('users').selectAll().where('role', '>=', Role.SuperAdmin).orderBy('id').executeTakeFirstOrThrow();
  print(`Importing ${entries.length} servers from ${file}`);
  const summary = await market.batch.importAll(
    toPrincipal(root),
    entries,
    'en',
    (event) => {
      if (event.status === 'done') return;
      print(`${MARK[event.status]} ${event.name}: ${event.message}`);
      for (const warning of event.warnings ?? []) print(`  ! ${warning}`);
    },
    settings,
  );
  print(`Done: ${summary.success} imported, ${summary.skipped} skipped, ${summary.failed} failed`);
  return summary;
}
