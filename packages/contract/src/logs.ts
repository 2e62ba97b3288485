import { z } from 'zod';
import { LOGS_MAX_PAGE_SIZE, LOGS_PAGE_SIZE, MAX_ID, MAX_PAGE, MAX_SERVICE_NAME_FILTER_LENGTH } from './limits.js';

/** `GET /mcp_logs` filters; `page` is 1-based. Empty filter values mean "all". */
export const LogsQuery = z.object({
  page: z.coerce.number().int().min(1).max(MAX_PAGE).default(1),
  page_size: z.coerce.number().int().min(1).max(LOGS_MAX_PAGE_SIZE).default(LOGS_PAGE_SIZE),
  service_id: z.union([z.literal(''), z.coerce.number().int().min(0).max(MAX_ID)]).optional(),
  service_name: z.string().trim().max(MAX_SERVICE_NAME_FILTER_LENGTH).optional(),
  phase: z.union([z.literal(''), z.literal('all'), z.enum(['install', 'run'])]).optional(),
  level: z.union([z.literal(''), z.literal('all'), z.enum(['info', 'warn', 'error'])]).optional(),
});
export type LogsQuery = z.infer<typeof LogsQuery>;

export const LogEntry = z.object({
  id: z.number().int(),
  /** Unix milliseconds. */
  created_at: z.number().int(),
  service_id: z.number().int().nullable(),
  service_name: z.string(),
  phase: z.string(),
  level: z.string(),
  message: z.string(),
});
export type LogEntry = z.infer<typeof LogEntry>;

export const LogPage = z.object({ logs: z.array(LogEntry), total: z.number().int(), page: z.number().int() });
export type LogPage = z.infer<typeof LogPage>;
