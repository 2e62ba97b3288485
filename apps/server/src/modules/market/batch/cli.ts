import { readFileSync } from 'node:fs';
import { Role } from '@toolport/contract';
import { CliUsageError, parseCommand } from '../../../cli/args.js';
import { migrateToLatest } from '../../../db/db.js';
import { createHealthProbe } from '../../../gateway/index.js';
import { AppError } from '../../../http/errors.js';
import { Principals, toPrincipal } from '../../../http/principals.js';
import { translate } from '../../../i18n/index.js';
import { ConfigEvents } from '../../../infra/events.js';
import { Leader } from '../../../infra/leader.js';
import { Metrics } from '../../../infra/metrics.js';
import { setAddressPolicy } from '../../../infra/outbound.js';
import { resolveMasterSecret, Secrets } from '../../../infra/secrets.js';
import { ServiceLog } from '../../../infra/service-log.js';
import { openRuntime } from '../../../runtime.js';
import { bodyFieldsOf, createCommandAudit } from '../../audit/index.js';
import { createRefreshTokens } from '../../auth/index.js';
import { createExposurePorts, createExposureTransfer } from '../../exposure/index.js';
import { createOptionsModule } from '../../options/index.js';
import { createServiceCatalog, createServiceRows, createServicesModule } from '../../services/index.js';
import { createUsersModule } from '../../users/index.js';
import { createMarketModule, createMarketSources } from '../index.js';
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

  const rt = await openRuntime(io.env ?? process.env);
  try {
    const summary = await importEntries(rt, file, entries, print);
    // The document as the file has it, its secrets masked by the trail (decision 0049).
    await createCommandAudit(rt.database.db).command({
      command: 'toolport import',
      action: 'import',
      object: 'import',
      id: file,
      changes: { file, document: bodyFieldsOf(text), summary },
    });
    return summary;
  } finally {
    await rt.database.db.destroy();
  }
}

/**
 * Builds what installing needs and nothing more: the options, users (for the super admin), services and
 * market modules, with the gateway's one-off health probe in place of the gateway. No HTTP server, no
 * upstream pool: no enabled service starts, and each new one runs only for its install's health check.
 * Without Redis relaying events, a running server picks the new services up on their first request.
 */
async function importEntries(
  rt: Awaited<ReturnType<typeof openRuntime>>,
  file: string,
  { entries, settings }: ReturnType<typeof batchDocumentOf>,
  print: (line: string) => void,
): Promise<BatchSummary> {
  const { config, logger } = rt;
  const { db } = rt.database;
  await migrateToLatest(db);
  const events = new ConfigEvents();
  const secrets = new Secrets(resolveMasterSecret(config.secretKey, config.dataDir));
  const options = createOptionsModule({ db, secrets, events });
  await options.service.load();
  // Remote services are checked under the same address policy as the server's (infra/outbound.ts).
  setAddressPolicy(() => options.service.bool('AllowPrivateNetworkUpstreams'));
  const serviceLog = new ServiceLog(db, logger);
  const users = createUsersModule({ db, refreshTokens: createRefreshTokens(db), secrets, events, config, logger });
  // A fresh DATA_DIR gets its super admin here as at a first start, so the import has someone to run as.
  await users.ensureSuperAdmin(print);
  const catalog = createServiceCatalog({ db, users: users.repo, secrets, events });
  const metrics = new Metrics();
  const probe = createHealthProbe({ catalog, serviceLog, options: options.service, logger, config, metrics });
  const services = createServicesModule({
    db,
    secrets,
    events,
    options: options.service,
    serviceLog,
    rows: createServiceRows({ db, events }),
    catalog,
    gateway: probe,
  });
  const leader = Leader.solo({ logger });
  const market = createMarketModule({
    db,
    config,
    logger,
    secrets,
    events,
    serviceLog,
    metrics,
    leader,
    principals: new Principals(users.repo, events),
    services,
    sources: createMarketSources(config, logger),
    replicaInstalls: undefined,
    gateway: probe,
    // Overrides and access travel; groups need the gateway's live tool lists, so this command skips them (and says so).
    transfer: createExposureTransfer({ ports: createExposurePorts({ db, events }), events }),
  });
  try {
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
  } finally {
    await market.close();
    await probe.close();
    await services.close();
    await users.close();
    await options.close();
    await leader.close();
    // The install logs reach the database before it closes.
    await serviceLog.flush();
  }
}
