import { z } from 'zod';

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
