import type { NewService, ServiceRow, ServiceUpdate } from '../../db/schema.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { ServicesRepo } from './repo.js';

/**
 * The service rows as the install lifecycle writes them: it registers new services, completes them
 * once installed, and removes them. A removal is announced, so the gateway drops what it runs for it.
 */
export class ServiceRows {
  constructor(
    private readonly repo: ServicesRepo,
    private readonly events: ConfigEvents,
  ) {}

  byId(id: number): Promise<ServiceRow | undefined> {
    return this.repo.byId(id);
  }

  byName(name: string): Promise<ServiceRow | undefined> {
    return this.repo.byName(name);
  }

  all(): Promise<ServiceRow[]> {
    return this.repo.all();
  }

  packaged(): Promise<Pick<ServiceRow, 'id' | 'package_name' | 'package_manager' | 'source'>[]> {
    return this.repo.packaged();
  }

  insert(service: NewService): Promise<ServiceRow> {
    return this.repo.insert(service);
  }

  update(id: number, patch: ServiceUpdate): Promise<void> {
    return this.repo.update(id, patch);
  }

  async remove(id: number): Promise<void> {
    await this.repo.delete(id);
    this.events.emit({ type: 'service.removed', serviceId: id });
  }
}
