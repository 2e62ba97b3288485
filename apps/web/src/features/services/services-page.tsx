import type { InstalledService } from '@toolport/contract';
import { RotateCw } from 'lucide-react';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { ConfirmDialog } from '../../components/ui/alert-dialog';
import { Button } from '../../components/ui/button';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '../../components/ui/tabs';
import { messageOf } from '../../lib/api';
import { useInstalledServices } from '../../lib/installed-services';
import { isAdmin, useSession } from '../../lib/session';
import { AddServiceMenu } from './add-service-menu';
import { ServiceDialogs, useServiceDialogs } from './service-dialogs';
import { ServiceGrid, ServiceGridSkeleton } from './service-grid';
import { type ServiceTab, servicesOnTab, serviceTabs } from './service-tabs';
import { type ServiceViewProps, serviceTitle } from './service-view-props';
import { ServicesTable } from './services-table';
import { useServiceActions } from './use-service-actions';
import { type ServicesView, ViewToggle } from './view-toggle';

/** The Services page (docs/console.md §2.5-2.9). */
export function ServicesPage() {
  const { t } = useTranslation('services');
  const admin = isAdmin(useSession().user);
  const services = useInstalledServices();
  const actions = useServiceActions();
  const dialogs = useServiceDialogs();
  const [view, setView] = useState<ServicesView>('grid');
  const [tab, setTab] = useState<ServiceTab>('all');
  // The target stays set while the confirmation closes, so its text does not change under the animation.
  const [uninstallTarget, setUninstallTarget] = useState<InstalledService | null>(null);
  const [confirmOpen, setConfirmOpen] = useState(false);

  const all = services.data ?? [];
  const shown = servicesOnTab(all, tab);
  const viewProps: ServiceViewProps = {
    admin,
    busy: actions.busy,
    onToggle: (s) => void actions.toggle(s),
    onCheckHealth: (s) => void actions.checkHealth(s),
    onReconnect: (s) => void actions.reconnect(s),
    onConfigure: (s) => dialogs.open('config', s.id),
    onEdit: (s) => dialogs.open('edit', s.id),
    onTools: (s) => dialogs.open('tools', s.id),
    onUpdate: (s) => void actions.update(s),
    onUninstall: (s) => {
      setUninstallTarget(s);
      setConfirmOpen(true);
    },
  };

  let content: ReactNode;
  // A background refresh that failed keeps the list it had (the next one may work); only no list at all is an error.
  if (services.isError && !services.data) {
    content = (
      <ErrorAlert title={t('loadFailedTitle')}>
        <p>{messageOf(services.error, t('loadFailed'))}</p>
        <Button variant="outline" size="sm" className="mt-3" onClick={() => void services.refetch()}>
          <RotateCw aria-hidden="true" />
          {t('retry')}
        </Button>
      </ErrorAlert>
    );
  } else if (services.isPending) {
    content = <ServiceGridSkeleton />;
  } else if (shown.length === 0) {
    content = (
      <p className="rounded-lg border border-dashed border-slate-300 py-12 text-center text-slate-600 dark:border-slate-700 dark:text-slate-400">
        {t('empty')}
      </p>
    );
  } else if (view === 'grid') {
    content = <ServiceGrid services={shown} {...viewProps} />;
  } else {
    content = <ServicesTable services={shown} {...viewProps} />;
  }

  return (
    <section className="space-y-6">
      <PageHeader
        title={t('title')}
        description={t('description')}
        actions={
          <>
            <ViewToggle view={view} onChange={setView} />
            {admin && <AddServiceMenu onBatchImport={() => dialogs.open('batch')} onCustomInstall={() => dialogs.open('custom')} />}
          </>
        }
      />
      <Tabs value={tab} onValueChange={(value) => setTab(value as ServiceTab)}>
        <TabsList aria-label={t('tabs.label')}>
          {serviceTabs.map((value) => (
            <TabsTrigger key={value} value={value}>
              {t(`tabs.${value}`)}
              {services.data && (
                <span className="text-xs tabular-nums text-slate-500 dark:text-slate-400">{servicesOnTab(all, value).length}</span>
              )}
            </TabsTrigger>
          ))}
        </TabsList>
        <TabsContent value={tab} className="mt-4">
          {content}
        </TabsContent>
      </Tabs>
      <ConfirmDialog
        open={confirmOpen}
        onOpenChange={setConfirmOpen}
        title={t('uninstall.title')}
        description={t('uninstall.description', { name: uninstallTarget ? serviceTitle(uninstallTarget) : '' })}
        confirmLabel={t('uninstall.confirm')}
        cancelLabel={t('uninstall.cancel')}
        destructive
        onConfirm={() => uninstallTarget && void actions.uninstall(uninstallTarget)}
      />
      <ServiceDialogs state={dialogs} services={all} admin={admin} />
    </section>
  );
}
