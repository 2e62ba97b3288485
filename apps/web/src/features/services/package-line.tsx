import type { InstalledService } from '@toolport/contract';
import { ArrowUpCircle, Trash2 } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { INSTALL_FAILED } from './health';
import { isUpdatable, serviceTitle } from './service-view-props';

interface PackageLineProps {
  service: InstalledService;
  admin: boolean;
  busy: boolean;
  updating: boolean;
  onUpdate(service: InstalledService): void;
  onUninstall(service: InstalledService): void;
}

/**
 * What a package service runs (decision 0035): the command as typed, the pinned version, and for admins
 * Update to the newest release. A service whose install failed offers to be removed instead.
 */
export function PackageLine({ service, admin, busy, updating, onUpdate, onUninstall }: PackageLineProps) {
  const { t } = useTranslation('services');
  const title = serviceTitle(service);
  const failed = service.health_status === INSTALL_FAILED;
  if (!service.typed_command && !isUpdatable(service) && !failed) return null;
  return (
    <div
      className="flex min-w-0 flex-wrap items-center gap-x-2 gap-y-1 text-xs text-slate-600 dark:text-slate-400"
      data-testid="package-line"
    >
      {service.typed_command && (
        <code className="min-w-0 break-all font-mono" title={t('card.typedCommand')}>
          {service.typed_command}
        </code>
      )}
      {service.version && !failed && (
        <span className="whitespace-nowrap font-mono" data-testid="pinned-version">
          {t('card.pinnedVersion', { version: service.version })}
        </span>
      )}
      {admin && failed && (
        <Button variant="outline" size="sm" className="h-7" onClick={() => onUninstall(service)}>
          <Trash2 aria-hidden="true" />
          {t('card.removeFailed')}
        </Button>
      )}
      {admin && !failed && isUpdatable(service) && (
        <Button
          variant="outline"
          size="sm"
          className="h-7"
          disabled={busy}
          aria-label={t('card.updateLabel', { name: title })}
          onClick={() => onUpdate(service)}
        >
          <ArrowUpCircle aria-hidden="true" className={updating ? 'animate-pulse' : undefined} />
          {updating ? t('card.updating') : t('card.update')}
        </Button>
      )}
    </div>
  );
}
