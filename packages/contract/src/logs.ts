import { z } from 'zod';

export const LOGS_PAGE_SIZE = 20;
export const LOGS_MAX_PAGE_SIZE = 100;

/** `GET /mcp_logs` filters; `page` is 1-based. Empty filter values mean "all". */
export const LogsQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  page_size: z.coerce.number().int().min(1).max(LOGS_MAX_PAGE_SIZE).default(LOGS_PAGE_SIZE),
  service_id: z.union([z.literal(''), z.coerce.number().int().min(0).max(2_147_483_647)]).optional(),
  service_name: z.string().trim().max(64).optional(),
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
