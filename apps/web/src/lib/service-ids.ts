import type { InstalledService } from '@toolport/contract';
import { LocalCheckError } from './failure';

/** Toggle, health check and uninstall need an integer id (docs/console.md §5), else 'Invalid Service ID format.'. */
export function integerIdOf(id: unknown): number {
  const n = typeof id === 'string' && /^\d+$/.test(id.trim()) ? Number(id) : id;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new LocalCheckError('errors.invalidId');
  return n;
}

/** A toggle needs the service in the local list (docs/console.md §5), else 'Service not found in the local store.'. */
export function localServiceOf(rows: readonly InstalledService[] | undefined, id: number): InstalledService {
  const row = rows?.find((r) => r.id === id);
  if (!row) throw new LocalCheckError('errors.notInLocalStore');
  return row;
}

/**
 * Uninstall from a card needs a numeric installed_service_id (docs/console.md §5), else 'Cannot Uninstall':
 * 'Service data is incomplete or service ID is missing.'.
 */
export function uninstallIdOf(service: { installed_service_id?: number | null } | undefined): number {
  const id = service?.installed_service_id;
  if (typeof id !== 'number' || !Number.isFinite(id)) throw new LocalCheckError('errors.uninstallIdMissing');
  return integerIdOf(id);
}
