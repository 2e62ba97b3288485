import type { InstalledService } from '@toolport/contract';

/** What a service is busy with: its controls are disabled meanwhile (docs/console.md §2.5). */
export type BusyAction = 'toggle' | 'health' | 'update' | 'reconnect';

/** What the grid and the list need from the page: who is looking, what is busy, and what each control does. */
export interface ServiceViewProps {
  admin: boolean;
  busy: Record<number, BusyAction>;
  onToggle(service: InstalledService): void;
  onCheckHealth(service: InstalledService): void;
  /** Admins: restart the service's link and check it again (the health popover's Reconnect). */
  onReconnect(service: InstalledService): void;
  onConfigure(service: InstalledService): void;
  onEdit(service: InstalledService): void;
  /** The service's tools: list, switches and overrides (decision 0026). */
  onTools(service: InstalledService): void;
  onUninstall(service: InstalledService): void;
  /** Admins: the newest release of the service's pinned package (decision 0035). */
  onUpdate(service: InstalledService): void;
}

/** A stdio service that runs a pinned package (npm or PyPI) can be updated to its newest release. */
export const isUpdatable = (service: Pick<InstalledService, 'type' | 'package_name' | 'version'>): boolean =>
  service.type === 'stdio' && !!service.package_name && !!service.version;

/** The name a service is shown under: its display name, else its name. */
export const serviceTitle = (service: Pick<InstalledService, 'display_name' | 'name'>): string => service.display_name || service.name;
