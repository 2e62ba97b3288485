import { ChevronDown, FileJson, Plus, Store, Terminal } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '../../components/ui/button';
import { DropdownMenu, DropdownMenuContent, DropdownMenuItem, DropdownMenuTrigger } from '../../components/ui/dropdown-menu';

/** Add Service (admins only, docs/console.md §2.5): Batch Import, Install from Market, Custom Install. */
export function AddServiceMenu({ onBatchImport, onCustomInstall }: { onBatchImport(): void; onCustomInstall(): void }) {
  const { t } = useTranslation('services');
  const navigate = useNavigate();
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button>
          <Plus aria-hidden="true" />
          {t('add.menu')}
          <ChevronDown aria-hidden="true" />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end">
        <DropdownMenuItem onSelect={onBatchImport}>
          <FileJson aria-hidden="true" />
          {t('add.batchImport')}
        </DropdownMenuItem>
        <DropdownMenuItem onSelect={() => void navigate('/market')}>
          <Store aria-hidden="true" />
          {t('add.market')}
        </DropdownMenuItem>
        <DropdownMenuItem onSelect={onCustomInstall}>
          <Terminal aria-hidden="true" />
          {t('add.custom')}
        </DropdownMenuItem>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}
