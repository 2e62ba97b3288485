import { RefreshCw } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { cn } from '../../lib/cn';
import { type HealthState, healthStateOf } from './health';

const dotClass: Record<HealthState, string> = {
  healthy: 'bg-emerald-500',
  unhealthy: 'bg-red-500',
  stopped: 'bg-slate-400',
  unknown: 'bg-amber-400',
};

/** The coloured dot of a service's health; its meaning is in the accessible text, not the colour alone. */
export function HealthDot({ status }: { status: string }) {
  const { t } = useTranslation('services');
  const state = healthStateOf(status);
  return (
    <span className="inline-flex items-center" data-health={state}>
      <span aria-hidden="true" className={cn('size-2.5 rounded-full', dotClass[state])} />
      <span className="sr-only">{t('health.label', { status: t(`health.${state}`) })}</span>
    </span>
  );
}

/** Health dot and the button that checks health now; the button spins and is disabled while the service is busy. */
export function HealthIndicator({
  status,
  name,
  busy,
  checking,
  onCheck,
}: {
  status: string;
  name: string;
  busy: boolean;
  checking: boolean;
  onCheck(): void;
}) {
  const { t } = useTranslation('services');
  const label = checking ? t('health.checking') : t('card.checkHealth', { name });
  return (
    <div className="flex items-center gap-1">
      <HealthDot status={status} />
      <Button variant="ghost" size="icon" className="size-7" aria-label={label} title={label} disabled={busy} onClick={onCheck}>
        <RefreshCw aria-hidden="true" className={cn(checking && 'animate-spin')} />
      </Button>
    </div>
  );
}
