import type { ZodApi } from '../../http/api.js';
import { type StatusDeps, statusRoutes } from './routes.js';

export type { StatusDeps } from './routes.js';

export interface StatusModule {
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** What the console reads before sign-in, and the liveness and readiness probes. */
export function createStatusModule(deps: StatusDeps): StatusModule {
  return {
    routes: (api) => statusRoutes(api, deps),
    close: async () => undefined,
  };
}
