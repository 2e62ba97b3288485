import type { InstalledService } from '@toolport/contract';
import { Skeleton } from '../../components/ui/skeleton';
import { ServiceCard } from './service-card';
import type { ServiceViewProps } from './service-view-props';

const PLACEHOLDER_CARDS = 3;
/**
 * One column below `sm` too: without a template the implicit column takes the widest card's content, so one long
 * title (a scoped package name) made the whole page wider than a phone. `grid-cols-*` tracks are `minmax(0, 1fr)`.
 */
export const gridClass = 'grid grid-cols-1 gap-4 sm:grid-cols-2 xl:grid-cols-3';

/** Cards of the height a loaded card has, so nothing moves when the list arrives. */
export function ServiceGridSkeleton() {
  return (
    <div className={gridClass}>
      {Array.from({ length: PLACEHOLDER_CARDS }, (_, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: placeholders have nothing else to tell them apart.
        <Skeleton key={i} className="h-40 rounded-lg" />
      ))}
    </div>
  );
}

export function ServiceGrid({ services, ...props }: ServiceViewProps & { services: InstalledService[] }) {
  return (
    <div className={gridClass}>
      {services.map((service) => (
        <ServiceCard key={service.id} service={service} {...props} />
      ))}
    </div>
  );
}
