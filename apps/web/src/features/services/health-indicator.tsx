import type { InstalledService } from '@toolport/contract';
import { RefreshCw, ScrollText } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '../../components/ui/button';
import { Tooltip } from '../../components/ui/tooltip';
import { cn } from '../../lib/cn';
import { type HealthState, healthLineOf, healthStateOf } from './health';

const dotClass: Record<HealthState, string> = {
  healthy: 'bg-emerald-500',
  unhealthy: 'bg-red-500',
  stopped: 'bg-slate-400',
  unknown: 'bg-amber-400',
};

type HealthFacts = Pick<InstalledService, 'health_status' | 'health_details' | 'tool_count'>;

/** The line that says why a service has its colour: tool count when healthy, the server's reason when not. */
export function useHealthLine(service: HealthFacts): string {
  const { t } = useTranslation('services');
  const line = healthLineOf(service);
  return t(line.key, line.values);
}

/**
 * The coloured dot of a service's health; its meaning is in the accessible text, not the colour alone. Hovering
 * or focusing it shows the reason (issue 15, item 1).
 */
export function HealthDot({ service }: { service: HealthFacts }) {
  const { t } = useTranslation('services');
  const state = healthStateOf(service.health_status);
  const line = useHealthLine(service);
  const label = `${t('health.label', { status: t(`health.${state}`) })}. ${line}`;
  return (
    <Tooltip content={line}>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: focus shows the reason to keyboard users as hover does. */}
      <span role="img" aria-label={label} tabIndex={0} className="inline-flex items-center rounded-full p-1" data-health={state}>
        <span aria-hidden="true" className={cn('size-2.5 rounded-full', dotClass[state])} />
      </span>
    </Tooltip>
  );
}

/** The reason as a line of text under the service's name, and for admins a link to its logs. */
export function HealthReason({ service, admin }: { service: HealthFacts & Pick<InstalledService, 'id'>; admin: boolean }) {
  const { t } = useTranslation('services');
  const state = healthStateOf(service.health_status);
  const line = useHealthLine(service);
  return (
    <p data-testid="health-reason" className="flex min-w-0 items-start gap-2 text-xs">
      <span
        className={cn(
          'min-w-0 break-words',
          state === 'unhealthy' ? 'text-red-700 dark:text-red-300' : 'text-slate-600 dark:text-slate-300',
        )}
      >
        {line}
      </span>
      {admin && state === 'unhealthy' && (
        <Link
          to={`/logs?service_id=${service.id}`}
          className="inline-flex shrink-0 items-center gap-1 text-teal-700 underline underline-offset-2 dark:text-teal-300"
        >
          <ScrollText aria-hidden="true" className="size-3.5" />
          {t('health.logs')}
        </Link>
      )}
    </p>
  );
}

/** Health dot and the button that checks health now; the button spins and is disabled while the service is busy. */
export function HealthIndicator({
  service,
  name,
  busy,
  checking,
  onCheck,
}: {
  service: HealthFacts;
  name: string;
  busy: boolean;
  checking: boolean;
  onCheck(): void;
}) {
  const { t } = useTranslation('services');
  const label = checking ? t('health.checking') : t('card.checkHealth', { name });
  return (
    <div className="flex items-center gap-1">
      <HealthDot service={service} />
      <Button variant="ghost" size="icon" className="size-7" aria-label={label} title={label} disabled={busy} onClick={onCheck}>
        <RefreshCw aria-hidden="true" className={cn(checking && 'animate-spin')} />
      </Button>
    </div>
  );
}
