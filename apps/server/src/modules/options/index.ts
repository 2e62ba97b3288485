import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Secrets } from '../../infra/secrets.js';
import { OptionsRepo } from './repo.js';
import { optionRoutes } from './routes.js';
import { OptionsService } from './service.js';

export { SECRET_MASK } from './definitions.js';
export type { OptionsService } from './service.js';

export interface OptionsDeps {
  db: Db;
  /** Secret preferences are encrypted at rest. */
  secrets: Secrets;
  /** A change is announced as `option.changed`. */
  events: ConfigEvents;
}

export interface OptionsModule {
  /** Empty until `load()`: the composition root loads it before anything reads a preference. */
  service: OptionsService;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Server preferences (Preferences in the console). */
export function createOptionsModule(deps: OptionsDeps): OptionsModule {
  const service = new OptionsService(new OptionsRepo(deps.db), deps.secrets, deps.events);
  return {
    service,
    routes: (api) => optionRoutes(api, service),
    close: async () => undefined,
  };
}
