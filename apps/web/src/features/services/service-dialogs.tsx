import type { InstalledService } from '@toolport/contract';
import { lazy, Suspense, useCallback, useState } from 'react';
import { useInstallPolling } from '../installs';

// Opened on demand: their code loads on first use and stays out of the first page load.
const ConfigDialog = lazy(() => import('./config-dialog'));
const EditServiceDialog = lazy(() => import('./edit-service-dialog'));
const CustomInstallDialog = lazy(() => import('./custom-install-dialog'));
const BatchImportDialog = lazy(() => import('./batch-import-dialog'));
const ToolsDialog = lazy(() => import('./tools-dialog'));

export type ServiceDialogKind = 'config' | 'edit' | 'custom' | 'batch' | 'tools';

/**
 * Which dialog is open, for which service, and which have been opened at all: a dialog stays mounted
 * after its first opening, so it can animate out and reset 300 ms after closing (docs/console.md §4).
 */
export function useServiceDialogs() {
  const [current, setCurrent] = useState<ServiceDialogKind | null>(null);
  const [serviceId, setServiceId] = useState<number | null>(null);
  const [mounted, setMounted] = useState<ReadonlySet<ServiceDialogKind>>(new Set());

  const open = useCallback((kind: ServiceDialogKind, id?: number) => {
    if (id !== undefined) setServiceId(id);
    setMounted((set) => (set.has(kind) ? set : new Set(set).add(kind)));
    setCurrent(kind);
  }, []);

  const close = useCallback(() => setCurrent(null), []);

  return { current, serviceId, mounted, open, close };
}

export type ServiceDialogsState = ReturnType<typeof useServiceDialogs>;

export function ServiceDialogs({ state, services, admin }: { state: ServiceDialogsState; services: InstalledService[]; admin: boolean }) {
  const startPolling = useInstallPolling();
  const service = services.find((s) => s.id === state.serviceId);
  const openChange = (kind: ServiceDialogKind) => (open: boolean) => (open ? state.open(kind) : state.close());

  return (
    <>
      {state.mounted.has('config') && service && (
        <Suspense fallback={null}>
          <ConfigDialog service={service} admin={admin} open={state.current === 'config'} onOpenChange={openChange('config')} />
        </Suspense>
      )}
      {state.mounted.has('edit') && service && (
        <Suspense fallback={null}>
          <EditServiceDialog key={service.id} service={service} open={state.current === 'edit'} onOpenChange={openChange('edit')} />
        </Suspense>
      )}
      {state.mounted.has('tools') && service && (
        <Suspense fallback={null}>
          <ToolsDialog
            key={service.id}
            service={service}
            admin={admin}
            open={state.current === 'tools'}
            onOpenChange={openChange('tools')}
          />
        </Suspense>
      )}
      {state.mounted.has('custom') && (
        <Suspense fallback={null}>
          <CustomInstallDialog open={state.current === 'custom'} onOpenChange={openChange('custom')} onInstallStarted={startPolling} />
        </Suspense>
      )}
      {state.mounted.has('batch') && (
        <Suspense fallback={null}>
          <BatchImportDialog open={state.current === 'batch'} onOpenChange={openChange('batch')} />
        </Suspense>
      )}
    </>
  );
}
