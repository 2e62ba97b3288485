import { withCore } from '../../build/core.js';
import { CliUsageError, parseCommand } from '../../cli/args.js';
import { isDay } from './days.js';
import { recomputeRollups, recordedDays } from './rollups.js';

export interface HistoryCommandIo {
  /** The environment the configuration is read from (tests pass their own). */
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
}

const USAGE = 'expected: toolport history rebuild [--from YYYY-MM-DD] [--to YYYY-MM-DD]';

/**
 * `toolport history rebuild`: recomputes the daily rollups from the request records, for every
 * recorded day or the days between --from and --to (inclusive). For records stored without rollups:
 * by a replica of an older version during a rolling upgrade, or by a bulk import. Safe while servers
 * run (each day is replaced under the rollup lock); days the retention purge has thinned are kept.
 */
export async function runHistoryCommand(args: string[], io: HistoryCommandIo = {}): Promise<void> {
  const { positionals, values } = parseCommand(args, { from: { type: 'string' }, to: { type: 'string' } });
  const [action, ...extra] = positionals;
  if (action !== 'rebuild' || extra.length > 0) throw new CliUsageError(USAGE);
  for (const bound of [values.from, values.to]) {
    if (bound !== undefined && !isDay(bound)) throw new CliUsageError(`${bound} is not a day (YYYY-MM-DD); ${USAGE}`);
  }
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  await withCore(io.env, async ({ db }) => {
    const days = (await recordedDays(db)).filter(
      (day) => (values.from === undefined || day >= values.from) && (values.to === undefined || day <= values.to),
    );
    const { rebuilt, skipped } = await recomputeRollups(db, days);
    print(`Rebuilt the rollups of ${rebuilt.length} day${rebuilt.length === 1 ? '' : 's'}`);
    if (skipped.length > 0) {
      print(`Kept ${skipped.length} day${skipped.length === 1 ? '' : 's'} whose records were partly purged: ${skipped.join(', ')}`);
    }
  });
}
