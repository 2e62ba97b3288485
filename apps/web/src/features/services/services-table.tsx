import type { InstalledService } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';
import { shownStateOf } from './health';
import { ServiceActions, serviceControls } from './service-controls';
import { type ServiceViewProps, serviceTitle } from './service-view-props';

/**
 * The list view (docs/console.md §2.5): status, name, description, version (or 'unknown'), health status
 * (or 'unknown'), enable switch and operations. Narrower than its seven columns (a phone), one card per service of
 * label and value lines, as the Users table does, so the switch and the actions stay on screen.
 */
export function ServicesTable({ services, ...props }: ServiceViewProps & { services: InstalledService[] }) {
  const { t } = useTranslation('services');
  const label = (column: 'status' | 'name' | 'description' | 'version' | 'health' | 'enabled' | 'operations') => t(`columns.${column}`);
  return (
    <Table stackBelow="2xl">
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
          const health = shownStateOf(service);
          const controls = serviceControls(service, props);
          return (
            <TableRow key={service.id} data-testid="service-row">
              <TableCell label={label('status')}>
                <Badge tone={service.enabled ? 'success' : 'neutral'}>{service.enabled ? t('status.active') : t('status.inactive')}</Badge>
              </TableCell>
              <TableCell label={label('name')} className="max-w-56">
                <div className="min-w-0">
                  <div className="truncate font-medium" title={serviceTitle(service)} data-i18n-data>
                    {serviceTitle(service)}
                  </div>
                  <div className="truncate font-mono text-xs text-slate-500 dark:text-slate-400">{service.name}</div>
                  {controls.pkg}
                </div>
              </TableCell>
              <TableCell label={label('description')} className="max-w-72">
                <span className="line-clamp-2 text-slate-600 dark:text-slate-400">{service.description || t('noDescription')}</span>
              </TableCell>
              <TableCell label={label('version')} className="whitespace-nowrap">
                {service.version || t('unknown')}
              </TableCell>
              <TableCell label={label('health')}>
                <div className="min-w-0">
                  <div className="flex items-center gap-1 whitespace-nowrap">
                    {controls.health}
                    <span>{health === 'unknown' ? t('unknown') : t(`health.${health}`)}</span>
                  </div>
                  <div className="max-w-64">{controls.reason}</div>
                </div>
              </TableCell>
              <TableCell label={label('enabled')}>{controls.toggle}</TableCell>
              <TableCell label={label('operations')}>
                <div className="flex flex-wrap items-center justify-end gap-1">
                  <ServiceActions service={service} show="all" {...props} />
                </div>
              </TableCell>
            </TableRow>
          );
        })}
      </TableBody>
    </Table>
  );
}
