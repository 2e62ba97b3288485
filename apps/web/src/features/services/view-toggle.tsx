import { LayoutGrid, List } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { cn } from '../../lib/cn';

export type ServicesView = 'grid' | 'list';

/** Grid or list; each button says whether it is the current view (aria-pressed). */
export function ViewToggle({ view, onChange }: { view: ServicesView; onChange(view: ServicesView): void }) {
  const { t } = useTranslation('services');
  const choices = [
    { value: 'grid' as const, label: t('view.grid'), Icon: LayoutGrid },
    { value: 'list' as const, label: t('view.list'), Icon: List },
  ];
  return (
    <fieldset className="inline-flex rounded-md border border-slate-300 p-0.5 dark:border-slate-700">
      <legend className="sr-only">{t('view.label')}</legend>
      {choices.map(({ value, label, Icon }) => (
        <Button
          key={value}
          variant="ghost"
          size="icon"
          className={cn('size-8', view === value && 'bg-slate-100 text-slate-900 dark:bg-slate-800 dark:text-slate-100')}
          aria-label={label}
          title={label}
          aria-pressed={view === value}
          onClick={() => onChange(value)}
        >
          <Icon aria-hidden="true" />
        </Button>
      ))}
    </fieldset>
  );
}
