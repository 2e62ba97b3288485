import type { InstalledService } from '@toolport/contract';
import { Skeleton } from '../../components/ui/skeleton';
import { ServiceCard } from './service-card';
import type { ServiceViewProps } from './service-view-props';

const PLACEHOLDER_CARDS = 3;
export const gridClass = 'grid gap-4 sm:grid-cols-2 xl:grid-cols-3';

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
