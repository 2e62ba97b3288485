import type { MyEnv } from '@toolport/contract';
import type { ServiceRow } from '../../db/schema.js';
import { badRequest } from '../../http/errors.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Secrets } from '../../infra/secrets.js';
import { SECRET_MASK } from '../options/index.js';
import { declaredVariables } from './catalog.js';
import { maskValues } from './presenter.js';
import type { ServicesRepo } from './repo.js';

/**
 * A user's own values for a service's variables (stored encrypted per user and service). The pool
 * gives a user who has some a process of their own (docs/architecture.md §3).
 */
export class PersonalEnvs {
  constructor(private readonly deps: { repo: ServicesRepo; secrets: Secrets; events: ConfigEvents }) {}

  /** The variables a user may set: those the service declares or has defaults for. */
  private allowedNames(row: ServiceRow): string[] {
    const defaults = Object.keys(this.deps.secrets.decryptJson<Record<string, string>>(row.env_enc, {}));
    return [...new Set([...declaredVariables(row).map((v) => v.name), ...defaults])].sort();
  }

  private async stored(serviceId: number, userId: number): Promise<Record<string, string>> {
    return this.deps.secrets.decryptJson<Record<string, string>>(await this.deps.repo.userEnv(serviceId, userId), {});
  }

  async get(row: ServiceRow, userId: number): Promise<MyEnv> {
    return { names: this.allowedNames(row), env: maskValues(await this.stored(row.id, userId)) };
  }

  /**
   * Replaces the user's values. Only the service's own variable names: a free name such as
   * NODE_OPTIONS or LD_PRELOAD would let any user run code in the service's process.
   */
  async set(row: ServiceRow, userId: number, submitted: Record<string, string>): Promise<MyEnv> {
    const allowed = this.allowedNames(row);
    const previous = await this.stored(row.id, userId);
    const next: Record<string, string> = {};
    for (const [name, value] of Object.entries(submitted)) {
      if (!allowed.includes(name)) throw badRequest('service.env_name_not_allowed', { name: name.slice(0, 64) });
      if (value.includes('\u0000')) throw badRequest('service.env_value_invalid', { name });
      // The console may send back the mask it was shown: the stored value stays.
      const kept = value === SECRET_MASK ? previous[name] : value;
      if (kept) next[name] = kept;
    }
    if (Object.keys(next).length === 0) await this.deps.repo.deleteUserEnv(row.id, userId);
    else await this.deps.repo.setUserEnv(row.id, userId, this.deps.secrets.encryptJson(next));
    this.deps.events.emit({ type: 'service.changed', serviceId: row.id });
    return { names: allowed, env: maskValues(next) };
  }
}
