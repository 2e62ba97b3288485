import type { OptionKey } from '@toolport/contract';

/**
 * The preferences the gateway reads (StdioServiceStartupStrategy, timeouts, intervals, ServerAddress),
 * current on every call: an admin's change applies at once. The options module provides it.
 */
export interface OptionsReader {
  get(key: OptionKey): string;
  int(key: OptionKey): number;
}
