import type { SystemOverview } from '@toolport/contract';
import { Activity, Coins, type LucideIcon, Server, Timer } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Card } from '../../components/ui/card';
import { Skeleton } from '../../components/ui/skeleton';

/** Fees are not part of the product (docs/console.md §1): the card is a fixed 0. */
const REMAINING_CREDITS = 0;

function StatCard({ label, value, icon: Icon }: { label: string; value: string | undefined; icon: LucideIcon }) {
  return (
    <Card className="flex items-start justify-between gap-3 p-5">
      <div className="min-w-0 space-y-1">
        <p className="text-sm text-slate-600 dark:text-slate-400">{label}</p>
        {value === undefined ? (
          <Skeleton className="h-8 w-20" />
        ) : (
          <p className="h-8 text-2xl font-semibold tabular-nums" data-testid="stat-value">
            {value}
          </p>
        )}
      </div>
      <Icon aria-hidden="true" className="size-5 shrink-0 text-teal-600 dark:text-teal-400" />
    </Card>
  );
}

/** The four counters of docs/console.md §2.4; while loading, each value is a placeholder of the same size. */
export function StatCards({ overview }: { overview: SystemOverview | undefined }) {
  const { t, i18n } = useTranslation('dashboard');
  const number = new Intl.NumberFormat(i18n.language);
  const value = (pick: (o: SystemOverview) => number) => (overview ? number.format(pick(overview)) : undefined);
  return (
    <div className="grid gap-4 sm:grid-cols-2 xl:grid-cols-4">
      <StatCard label={t('stats.activeServices')} value={value((o) => o.enabled_services)} icon={Server} />
      <StatCard label={t('stats.todayRequests')} value={value((o) => o.today_total_requests)} icon={Activity} />
      <StatCard
        label={t('stats.avgResponseTime')}
        value={overview && t('stats.ms', { value: number.format(Math.round(overview.today_avg_response_time_ms)) })}
        icon={Timer}
      />
      <StatCard label={t('stats.remainingCredits')} value={overview && number.format(REMAINING_CREDITS)} icon={Coins} />
    </div>
  );
}
