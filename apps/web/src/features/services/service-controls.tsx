import type { InstalledService } from '@toolport/contract';
import { Pencil, Settings2, Trash2, Wrench } from 'lucide-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { cn } from '../../lib/cn';
import { EnableSwitch } from './enable-switch';
import { HealthIndicator, HealthReason } from './health-indicator';
import { PackageLine } from './package-line';
import { type ServiceViewProps, serviceTitle } from './service-view-props';

/**
 * Configure and Tools, and for admins Edit and Uninstall: the operations of one service, the same in the
 * grid's card and the list's row (docs/console.md §2.5). The card shows the admin's pair in its header and the
 * others at its foot, so each pair can be asked for alone; `compact` is the card's smaller icon buttons.
 */
export function ServiceActions({
  service,
  show,
  compact = false,
  ...props
}: Pick<ServiceViewProps, 'admin' | 'onConfigure' | 'onTools' | 'onEdit' | 'onUninstall'> & {
  service: InstalledService;
  show: 'open' | 'admin' | 'all';
  compact?: boolean;
}) {
  const { t } = useTranslation('services');
  const title = serviceTitle(service);
  return (
    <>
      {show !== 'admin' && (
        <>
          <Button variant="outline" size="sm" onClick={() => props.onConfigure(service)}>
            <Settings2 aria-hidden="true" />
            {t('card.configure')}
          </Button>
          <Button variant="outline" size="sm" aria-label={t('tools.buttonLabel', { name: title })} onClick={() => props.onTools(service)}>
            <Wrench aria-hidden="true" />
            {t('tools.button')}
          </Button>
        </>
      )}
      {show !== 'open' && props.admin && (
        <>
          <Button
            variant="ghost"
            size="icon"
            className={cn(compact && 'size-7')}
            aria-label={t('card.edit', { name: title })}
            onClick={() => props.onEdit(service)}
          >
            <Pencil aria-hidden="true" />
          </Button>
          <Button
            variant="ghost"
            size="icon"
            className={cn(compact && 'size-7', 'text-red-600 hover:text-red-700 dark:text-red-400')}
            aria-label={t('card.uninstall', { name: title })}
            onClick={() => props.onUninstall(service)}
          >
            <Trash2 aria-hidden="true" />
          </Button>
        </>
      )}
    </>
  );
}

/**
 * The status controls of one service, wired to the page's actions and its busy mark: the health dot with its
 * check, the health reason with Reconnect, the package line with Update, and the enable switch. The card and
 * the row place them where each wants them.
 */
export function serviceControls(
  service: InstalledService,
  props: ServiceViewProps,
): Record<'health' | 'reason' | 'pkg' | 'toggle', ReactNode> {
  const title = serviceTitle(service);
  const busy = props.busy[service.id];
  return {
    health: (
      <HealthIndicator
        service={service}
        name={title}
        admin={props.admin}
        busy={!!busy}
        checking={busy === 'health'}
        onCheck={() => props.onCheckHealth(service)}
      />
    ),
    reason: (
      <HealthReason
        service={service}
        name={title}
        admin={props.admin}
        reconnecting={busy === 'reconnect'}
        busy={!!busy}
        onReconnect={() => props.onReconnect(service)}
      />
    ),
    pkg: (
      <PackageLine
        service={service}
        admin={props.admin}
        busy={!!busy}
        updating={busy === 'update'}
        onUpdate={props.onUpdate}
        onUninstall={props.onUninstall}
      />
    ),
    toggle: (
      <EnableSwitch
        name={title}
        enabled={service.enabled}
        globallyEnabled={service.globally_enabled}
        admin={props.admin}
        busy={!!busy}
        onToggle={() => props.onToggle(service)}
      />
    ),
  };
}
