import { pathOf, routes } from '@toolport/contract';

/** Batch import (docs/console.md §2.9, §3, §4): the progress events and the report built from them. */

export type BatchItemStatus = 'success' | 'skipped' | 'failed';

export interface BatchItem {
  name: string;
  status: BatchItemStatus;
  message: string;
  /** What was imported only in part (users unknown here left out of an access list…), in the server's words. */
  warnings: readonly string[];
  /** Created, but it does not answer yet (issue 15): a success with a caveat, shown amber. */
  warning?: boolean;
}

export interface BatchSummary {
  success: number;
  skipped: number;
  failed: number;
}

export type BatchEvent = { kind: 'item'; item: BatchItem } | { kind: 'done'; summary: BatchSummary | undefined } | { kind: 'ignored' };

const itemStatuses: readonly string[] = ['success', 'skipped', 'failed'];

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** One `data:` line of the progress stream: `{name, status, message}`, or `{status: 'done', summary}` at the end. */
export function parseBatchEvent(data: string): BatchEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { kind: 'ignored' };
  }
  if (!parsed || typeof parsed !== 'object') return { kind: 'ignored' };
  const event = parsed as Record<string, unknown>;
  if (event.status === 'done') {
    const s = event.summary as Record<string, unknown> | undefined;
    return {
      kind: 'done',
      summary: s && typeof s === 'object' ? { success: count(s.success), skipped: count(s.skipped), failed: count(s.failed) } : undefined,
    };
  }
  if (typeof event.status !== 'string' || !itemStatuses.includes(event.status)) return { kind: 'ignored' };
  return {
    kind: 'item',
    item: {
      name: String(event.name ?? ''),
      status: event.status as BatchItemStatus,
      message: String(event.message ?? ''),
      warnings: Array.isArray(event.warnings) ? event.warnings.map(String) : [],
      ...(event.warning === true ? { warning: true } : {}),
    },
  };
}

/** The counts of the report: the server's summary, else counted from the lines received. */
export function summarize(items: readonly BatchItem[], summary: BatchSummary | undefined): BatchSummary {
  if (summary) return summary;
  return {
    success: items.filter((i) => i.status === 'success').length,
    skipped: items.filter((i) => i.status === 'skipped').length,
    failed: items.filter((i) => i.status === 'failed').length,
  };
}

/** Import is possible when there is text and nothing is running (docs/console.md §2.9). */
export const canImport = (text: string, running: boolean): boolean => text.trim() !== '' && !running;

/** The JSON typed, or undefined when it does not parse (the dialog then shows the invalid-JSON alert). */
export function parseImportJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const progressUrl = (taskId: string, token: string): string =>
  `/api${pathOf(routes.market.batchProgress, { task_id: taskId })}?token=${encodeURIComponent(token)}`;
