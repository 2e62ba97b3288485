import { z } from 'zod';
import { MAX_ID } from './limits.js';

/** `GET /analytics/system/overview` (dashboard). */
export const SystemOverview = z.object({
  enabled_services: z.number().int(),
  healthy_services: z.number().int(),
  unhealthy_services: z.number().int(),
  today_total_requests: z.number().int(),
  today_avg_response_time_ms: z.number(),
});
export type SystemOverview = z.infer<typeof SystemOverview>;

/** One row of `GET /analytics/services/utilization`. */
export const ServiceUtilization = z.object({
  service_id: z.number().int(),
  service_name: z.string(),
  display_name: z.string(),
  enabled: z.boolean(),
  today_request_count: z.number().int(),
  today_avg_latency_ms: z.number(),
});
export type ServiceUtilization = z.infer<typeof ServiceUtilization>;

/**
 * `GET /analytics/history`: figures of any range of days from the daily rollups, which outlive the
 * raw request records' retention.
 */
export const HISTORY_MAX_DAYS = 366;
export const HISTORY_DEFAULT_DAYS = 30;
export const HISTORY_MAX_TARGETS = 100;

const optionalId = z.union([z.literal(''), z.coerce.number().int().min(0).max(MAX_ID)]).optional();

/** Dates are checked by the route (localised messages), not here. */
export const HistoryQuery = z.object({
  from: z.string().trim().max(32).optional(),
  to: z.string().trim().max(32).optional(),
  service_id: optionalId,
  user_id: optionalId,
});
export type HistoryQuery = z.infer<typeof HistoryQuery>;

const figures = {
  /** Admitted requests (ok or error). */
  requests: z.number().int(),
  errors: z.number().int(),
  /** Refused over the daily limit. */
  limited: z.number().int(),
  avg_latency_ms: z.number(),
  max_latency_ms: z.number().int(),
  bytes_in: z.number().int(),
  bytes_out: z.number().int(),
};

export const HistoryDay = z.object({ day: z.string(), ...figures });
export const HistoryService = z.object({ service_id: z.number().int(), service_name: z.string(), ...figures });
export const HistoryTarget = z.object({ method: z.string(), target: z.string(), ...figures });

export const UsageHistory = z.object({
  from: z.string(),
  to: z.string(),
  /** Every day of the range, oldest first, zeros included. */
  days: z.array(HistoryDay),
  /** Per service that had requests in the range, busiest first. */
  services: z.array(HistoryService),
  /** Per method and tool / resource / prompt of the chosen service, busiest first; empty without service_id. */
  targets: z.array(HistoryTarget),
});
export type UsageHistory = z.infer<typeof UsageHistory>;
