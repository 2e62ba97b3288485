import type { InstalledService } from '@toolport/contract';
import { Pencil, Settings2, Trash2, Wrench } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';
import { EnableSwitch } from './enable-switch';
import { healthStateOf } from './health';
import { HealthIndicator, HealthReason } from './health-indicator';
import { PackageLine } from './package-line';
import { type ServiceViewProps, serviceTitle } from './service-view-props';

/**
 * The list view (docs/console.md §2.5): status, name, description, version (or 'unknown'), health status
 * (or 'unknown'), enable switch and operations.
 */
export function ServicesTable({ services, ...props }: ServiceViewProps & { services: InstalledService[] }) {
  const { t } = useTranslation('services');
  return (
    <Table>
      <TableHeader>
        <TableRow>
          <TableHead>{t('columns.status')}</TableHead>
          <TableHead>{t('columns.name')}</TableHead>
          <TableHead>{t('columns.description')}</TableHead>
          <TableHead>{t('columns.version')}</TableHead>
          <TableHead>{t('columns.health')}</TableHead>
          <TableHead>{t('columns.enabled')}</TableHead>
          <TableHead className="text-right">{t('columns.operations')}</TableHead>
        </TableRow>
      </TableHeader>
      <TableBody>
        {services.map((service) => {
          const title = serviceTitle(service);
          const busy = props.busy[service.id];
          const health = healthStateOf(service.health_status);
          return (
            <TableRow key={service.id} data-testid="service-row">
              <TableCell>
                <Badge tone={service.enabled ? 'success' : 'neutral'}>{service.enabled ? t('status.active') : t('status.inactive')}</Badge>
              </TableCell>
              <TableCell className="max-w-56">
                <div className="truncate font-medium">{title}</div>
                <div className="truncate font-mono text-xs text-slate-500 dark:text-slate-400">{service.name}</div>
                <PackageLine
                  service={service}
                  admin={props.admin}
                  busy={!!busy}
                  updating={busy === 'update'}
                  onUpdate={props.onUpdate}
                  onUninstall={props.onUninstall}
                />
              </TableCell>
              <TableCell className="max-w-72">
                <span className="line-clamp-2 text-slate-600 dark:text-slate-400">{service.description || t('noDescription')}</span>
              </TableCell>
              <TableCell className="whitespace-nowrap">{service.version || t('unknown')}</TableCell>
              <TableCell>
                <div className="flex items-center gap-1 whitespace-nowrap">
                  <HealthIndicator
                    service={service}
                    name={title}
                    busy={!!busy}
                    checking={busy === 'health'}
                    onCheck={() => props.onCheckHealth(service)}
                  />
                  <span>{health === 'unknown' ? t('unknown') : t(`health.${health}`)}</span>
                </div>
                <div className="max-w-64">
                  <HealthReason
                    service={service}
                    name={title}
                    admin={props.admin}
                    reconnecting={busy === 'reconnect'}
                    busy={!!busy}
                    onReconnect={() => props.onReconnect(service)}
                  />
                </div>
              </TableCell>
              <TableCell>
                <EnableSwitch
                  name={title}
                  enabled={service.enabled}
                  globallyEnabled={service.globally_enabled}
                  admin={props.admin}
                  busy={!!busy}
                  onToggle={() => props.onToggle(service)}
                />
              </TableCell>
              <TableCell>
                <div className="flex items-center justify-end gap-1">
                  <Button variant="outline" size="sm" onClick={() => props.onConfigure(service)}>
                    <Settings2 aria-hidden="true" />
                    {t('card.configure')}
                  </Button>
                  <Button
                    variant="outline"
                    size="sm"
                    aria-label={t('tools.buttonLabel', { name: title })}
                    onClick={() => props.onTools(service)}
                  >
                    <Wrench aria-hidden="true" />
                    {t('tools.button')}
                  </Button>
                  {props.admin && (
                    <>
                      <Button
                        variant="ghost"
                        size="icon"
                        aria-label={t('card.edit', { name: title })}
                        onClick={() => props.onEdit(service)}
                      >
                        <Pencil aria-hidden="true" />
                      </Button>
                      <Button
                        variant="ghost"
                        size="icon"
                        className="text-red-600 hover:text-red-700 dark:text-red-400"
                        aria-label={t('card.uninstall', { name: title })}
                        onClick={() => props.onUninstall(service)}
                      >
                        <Trash2 aria-hidden="true" />
                      </Button>
                    </>
                  )}
                </div>
              </TableCell>
            </TableRow>
          );
        })}
      </TableBody>
    </Table>
  );
}
