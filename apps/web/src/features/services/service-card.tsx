import type { InstalledService } from '@toolport/contract';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Card } from '../../components/ui/card';
import { ServiceActions, serviceControls } from './service-controls';
import { type ServiceViewProps, serviceTitle } from './service-view-props';
import { toolCountsOfService } from './tool-counts';
import { hasDailyLimit } from './usage';
import { UsageBar } from './usage-bar';

/** One service in the grid (docs/console.md §2.5). */
export function ServiceCard({ service, ...props }: ServiceViewProps & { service: InstalledService }) {
  const { t } = useTranslation('services');
  const titleId = useId();
  const title = serviceTitle(service);
  const controls = serviceControls(service, props);
  return (
    <Card role="group" aria-labelledby={titleId} data-testid="service-card" className="flex min-w-0 flex-col gap-3 p-4">
      <div className="flex items-start gap-2">
        {controls.health}
        <div className="min-w-0 flex-1">
          {/* Long names (a scoped package, a long Chinese name) wrap onto a second line rather than widen the card. */}
          <h2 id={titleId} className="line-clamp-2 font-semibold leading-7 [overflow-wrap:anywhere]" title={title} data-i18n-data>
            {title}
          </h2>
          {title !== service.name && (
            <p className="truncate font-mono text-xs text-slate-500 dark:text-slate-400" title={service.name}>
              {service.name}
            </p>
          )}
        </div>
        {props.admin && (
          <div className="flex shrink-0 items-center">
            <ServiceActions service={service} show="admin" compact {...props} />
          </div>
        )}
      </div>
      {controls.reason}
      {controls.pkg}
      <p className="line-clamp-2 min-h-10 text-sm text-slate-600 dark:text-slate-400">{service.description || t('noDescription')}</p>
      {props.admin && service.switched_off_by.length > 0 && (
        <p className="text-xs text-amber-700 dark:text-amber-400">
          {t('card.switchedOffBy', { count: service.switched_off_by.length, names: service.switched_off_by.join(', ') })}
        </p>
      )}
      {service.tools_disabled > 0 && (
        <p className="text-xs text-slate-500 dark:text-slate-400">{t('tools.count', toolCountsOfService(service))}</p>
      )}
      {hasDailyLimit(service.rpd_limit) && (
        <UsageBar count={service.user_daily_request_count} limit={service.rpd_limit} remaining={service.remaining_requests} />
      )}
      <div className="mt-auto flex items-center justify-between gap-2 pt-1">
        <div className="flex gap-1">
          <ServiceActions service={service} show="open" {...props} />
        </div>
        {controls.toggle}
      </div>
    </Card>
  );
}
