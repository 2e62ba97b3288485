import { PackagePlus } from 'lucide-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Spinner } from '../../components/ui/spinner';
import { useMarketActions } from './market-actions';
import type { MarketItem } from './market-item';
import type { InstallOptions } from './use-install-tasks';
import type { UninstallFrom } from './use-uninstall-tasks';

interface InstallButtonProps {
  item: MarketItem;
  from: UninstallFrom;
  icon?: ReactNode;
  /** The detail view checks variables first and reloads after a success. */
  installOptions?: InstallOptions;
  onUninstalled?(): void;
}

/** Install, or Uninstall when installed; 'Installing...' and 'Uninstalling...' while busy (docs/console.md §2.10). */
export function InstallButton({ item, from, icon, installOptions, onUninstalled }: InstallButtonProps) {
  const { t } = useTranslation('market');
  const { tasks, uninstalls, install, requestUninstall } = useMarketActions();
  const installing = tasks[item.id]?.status === 'installing';
  const uninstalling = uninstalls[item.id]?.status === 'uninstalling';

  if (item.isInstalled && !installing) {
    return (
      <Button
        variant="outline"
        size={from === 'card' ? 'sm' : 'default'}
        className="text-red-700 hover:text-red-800 dark:text-red-400"
        disabled={uninstalling}
        onClick={() => requestUninstall(item, from, onUninstalled)}
      >
        {uninstalling ? <Spinner /> : icon}
        {uninstalling ? t('actions.uninstalling') : t('actions.uninstall')}
      </Button>
    );
  }
  return (
    <Button size={from === 'card' ? 'sm' : 'default'} disabled={installing} onClick={() => install(item, installOptions)}>
      {installing ? <Spinner /> : <PackagePlus aria-hidden="true" />}
      {installing ? t('actions.installing') : t('actions.install')}
    </Button>
  );
}
