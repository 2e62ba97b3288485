import type { InstalledService } from '@toolport/contract';
import { Pencil, Settings2, Trash2, Wrench } from 'lucide-react';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { EnableSwitch } from './enable-switch';
import { HealthIndicator, HealthReason } from './health-indicator';
import { PackageLine } from './package-line';
import { type ServiceViewProps, serviceTitle } from './service-view-props';
import { hasDailyLimit } from './usage';
import { UsageBar } from './usage-bar';

/** One service in the grid (docs/console.md §2.5). */
export function ServiceCard({ service, ...props }: ServiceViewProps & { service: InstalledService }) {
  const { t } = useTranslation('services');
  const titleId = useId();
  const title = serviceTitle(service);
  const busy = props.busy[service.id];
  return (
    <Card role="group" aria-labelledby={titleId} data-testid="service-card" className="flex flex-col gap-3 p-4">
      <div className="flex items-start gap-2">
        <HealthIndicator
          service={service}
          name={title}
          busy={!!busy}
          checking={busy === 'health'}
          onCheck={() => props.onCheckHealth(service)}
        />
        <div className="min-w-0 flex-1">
          <h2 id={titleId} className="truncate font-semibold leading-7" title={title}>
            {title}
          </h2>
          {title !== service.name && <p className="truncate font-mono text-xs text-slate-500 dark:text-slate-400">{service.name}</p>}
        </div>
        {props.admin && (
          <div className="flex shrink-0 items-center">
            <Button
              variant="ghost"
              size="icon"
              className="size-7"
              aria-label={t('card.edit', { name: title })}
              onClick={() => props.onEdit(service)}
            >
              <Pencil aria-hidden="true" />
            </Button>
            <Button
              variant="ghost"
              size="icon"
              className="size-7 text-red-600 hover:text-red-700 dark:text-red-400"
              aria-label={t('card.uninstall', { name: title })}
              onClick={() => props.onUninstall(service)}
            >
              <Trash2 aria-hidden="true" />
            </Button>
          </div>
        )}
      </div>
      <HealthReason
        service={service}
        name={title}
        admin={props.admin}
        reconnecting={busy === 'reconnect'}
        busy={!!busy}
        onReconnect={() => props.onReconnect(service)}
      />
      <PackageLine
        service={service}
        admin={props.admin}
        busy={!!busy}
        updating={busy === 'update'}
        onUpdate={props.onUpdate}
        onUninstall={props.onUninstall}
      />
      <p className="line-clamp-2 min-h-10 text-sm text-slate-600 dark:text-slate-400">{service.description || t('noDescription')}</p>
      {props.admin && service.switched_off_by.length > 0 && (
        <p className="text-xs text-amber-700 dark:text-amber-400">
          {t('card.switchedOffBy', { count: service.switched_off_by.length, names: service.switched_off_by.join(', ') })}
        </p>
      )}
      {service.tools_disabled > 0 && (
        <p className="text-xs text-slate-500 dark:text-slate-400">
          {t('tools.count', { enabled: Math.max(0, service.tool_count - service.tools_disabled), total: service.tool_count })}
        </p>
      )}
      {hasDailyLimit(service.rpd_limit) && (
        <UsageBar count={service.user_daily_request_count} limit={service.rpd_limit} remaining={service.remaining_requests} />
      )}
      <div className="mt-auto flex items-center justify-between gap-2 pt-1">
        <div className="flex gap-1">
          <Button variant="outline" size="sm" onClick={() => props.onConfigure(service)}>
            <Settings2 aria-hidden="true" />
            {t('card.configure')}
          </Button>
          <Button variant="outline" size="sm" aria-label={t('tools.buttonLabel', { name: title })} onClick={() => props.onTools(service)}>
            <Wrench aria-hidden="true" />
            {t('tools.button')}
          </Button>
        </div>
        <EnableSwitch
          name={title}
          enabled={service.enabled}
          globallyEnabled={service.globally_enabled}
          admin={props.admin}
          busy={!!busy}
          onToggle={() => props.onToggle(service)}
        />
      </div>
    </Card>
  );
}
