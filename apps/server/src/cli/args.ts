import { type ParseArgsConfig, parseArgs } from 'node:util';

/** Wrong arguments: the message and the usage, exit code 2. */
export class CliUsageError extends Error {}

/** A command that could not do its work for a reason the operator can act on: the message alone, exit code 1. */
export class CliCommandError extends Error {}

/** parseArgs with the CLI's conventions: unknown flags are a usage error. */
export function parseCommand<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliUsageError(err instanceof Error ? err.message : String(err));
  }
}
