import { writeFileSync } from 'node:fs';
import { withCore } from '../../../build/core.js';
import { CliUsageError, parseCommand } from '../../../cli/args.js';
import { createCommandAudit } from '../../audit/index.js';
import { createExposurePorts, createExposureTransfer } from '../../exposure/index.js';
import { allServiceRows } from '../../services/index.js';
import type { MarketCommandIo } from '../batch/cli.js';
import { exportDocument } from './routes.js';

/**
 * `toolport export [--include-secrets] [file]`: the installed services as an `mcpServers` document, read
 * straight from the database (no server is started). Variable and header values are masked unless
 * `--include-secrets` is given; a file is written readable by its owner only either way, and without a
 * file the document goes to stdout.
 */
export async function runExportCommand(args: string[], io: MarketCommandIo = {}): Promise<void> {
  const { positionals, values } = parseCommand(args, { 'include-secrets': { type: 'boolean' } });
  const [file, ...extra] = positionals;
  if (extra.length > 0) throw new CliUsageError('expected: toolport export [--include-secrets] [file]');
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  // Read straight from the database on the core (build/core.ts), which its lifecycle closes.
  await withCore(io.env, async ({ db, secrets, events, config }) => {
    const transfer = createExposureTransfer({ ports: createExposurePorts({ db, events }), events });
    const doc = await exportDocument(
      await allServiceRows(db),
      secrets,
      config.dataDir,
      { includeSecrets: values['include-secrets'] === true },
      transfer,
    );
    const text = JSON.stringify(doc, null, 2);
    await createCommandAudit(db).command({
      command: 'toolport export',
      action: 'export_services',
      object: 'export',
      id: file ?? '',
      changes: {
        file: file ?? '(stdout)',
        include_secrets: values['include-secrets'] === true,
        services: Object.keys(doc.mcpServers).length,
      },
    });
    if (!file) {
      print(text);
      return;
    }
    writeFileSync(file, `${text}\n`, { mode: 0o600 });
    print(`Exported ${Object.keys(doc.mcpServers).length} services to ${file}`);
  });
}
