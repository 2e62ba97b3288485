import type { InstalledService } from '@toolport/contract';

export type ServiceTab = 'all' | 'active' | 'inactive';
export const serviceTabs: readonly ServiceTab[] = ['all', 'active', 'inactive'];

/** Tabs All, Active (enabled) and Inactive (disabled) (docs/console.md §2.5). */
export function servicesOnTab(services: readonly InstalledService[], tab: ServiceTab): InstalledService[] {
  if (tab === 'all') return [...services];
  return services.filter((s) => s.enabled === (tab === 'active'));
}
