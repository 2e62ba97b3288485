import type { InstallStatus } from '@toolport/contract';

/** Custom stdio install polling (docs/console.md §4, §9): every 10 s, at most 30 times. */
export const INSTALL_POLL_INTERVAL_MS = 10_000;
export const INSTALL_POLL_MAX_ATTEMPTS = 30;

export type InstallOutcome =
  | { kind: 'completed' }
  | { kind: 'failed'; reason: string }
  /** Still pending or installing after the last attempt. */
  | { kind: 'timeout' }
  /** The last answer was not a status the console knows. */
  | { kind: 'statusTimeout' }
  /** The last request failed. */
  | { kind: 'checkFailed'; error: unknown };

type Attempt = { done: InstallOutcome } | { retry: InstallOutcome };

/** How a caller polls; the defaults are the custom stdio install's. */
export interface PollOptions {
  intervalMs?: number;
  /** Infinity polls until the task ends. */
  maxAttempts?: number;
  /** Ask at once, then every interval; otherwise the first request waits one interval. */
  immediate?: boolean;
  /** End at the first failed request or unknown answer instead of trying again. */
  stopOnFailure?: boolean;
  /** Every answer as it arrives, before it is judged: the live log of a marketplace install. */
  onStatus?(status: Partial<InstallStatus>): void;
}

function judge(status: Partial<InstallStatus> | null | undefined): Attempt {
  switch (status?.status) {
    case 'completed':
      return { done: { kind: 'completed' } };
    case 'failed':
      return { done: { kind: 'failed', reason: status.error_message || status.error || '' } };
    case 'pending':
    case 'installing':
      return { retry: { kind: 'timeout' } };
    default:
      return { retry: { kind: 'statusTimeout' } };
  }
}

/**
 * Asks for the task's status every 10 s until it is completed or failed, or 30 attempts have passed;
 * then `onDone` gets the outcome. Pending, installing, an unknown answer and a failed request all keep
 * polling; after the last attempt the outcome says which of them it ended on. `options` change the
 * pace, the limit and whether a failure ends it (the marketplace's rules). Returns a cancel function.
 */
export function pollInstallStatus(
  fetchStatus: () => Promise<Partial<InstallStatus> | null | undefined>,
  onDone: (outcome: InstallOutcome) => void,
  options: PollOptions = {},
): () => void {
  const { intervalMs = INSTALL_POLL_INTERVAL_MS, maxAttempts = INSTALL_POLL_MAX_ATTEMPTS, stopOnFailure = false } = options;
  let attempts = 0;
  let cancelled = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const attempt = async () => {
    attempts += 1;
    let result: Attempt;
    let failed = false;
    try {
      const status = await fetchStatus();
      if (cancelled) return;
      if (status) options.onStatus?.(status);
      result = judge(status);
      failed = 'retry' in result && result.retry.kind === 'statusTimeout';
    } catch (error) {
      result = { retry: { kind: 'checkFailed', error } };
      failed = true;
    }
    if (cancelled) return;
    if ('done' in result) onDone(result.done);
    else if (attempts >= maxAttempts || (failed && stopOnFailure)) onDone(result.retry);
    else timer = setTimeout(attempt, intervalMs);
  };

  timer = setTimeout(attempt, options.immediate ? 0 : intervalMs);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}
