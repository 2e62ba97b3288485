import type { SystemOverview } from '@toolport/contract';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Card, CardContent, CardHeader, CardTitle } from '../../components/ui/card';
import { Skeleton } from '../../components/ui/skeleton';
import { useServerStatus } from '../../lib/server-status';
import { formatUptime, secondsSince } from './uptime';
import { useNow } from './use-now';

function StatusRow({ label, children, testId }: { label: string; children: ReactNode; testId: string }) {
  return (
    <div className="flex items-center justify-between gap-4 py-2">
      <dt className="text-slate-600 dark:text-slate-400">{label}</dt>
      <dd className="text-right font-medium tabular-nums" data-testid={testId}>
        {children ?? <Skeleton className="h-5 w-24" />}
      </dd>
    </div>
  );
}

/** Uptime, enabled and healthy services, and unhealthy ones only when there are any (docs/console.md §2.4). */
export function SystemStatusCard({ overview }: { overview: SystemOverview | undefined }) {
  const { t } = useTranslation('dashboard');
  const { data: status } = useServerStatus();
  const now = useNow(60_000);
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('status.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <dl className="divide-y divide-slate-100 text-sm dark:divide-slate-800">
          <StatusRow label={t('status.uptime')} testId="uptime">
            {status && formatUptime(secondsSince(status.start_time, now), t)}
          </StatusRow>
          <StatusRow label={t('status.enabled')} testId="enabled-services">
            {overview?.enabled_services}
          </StatusRow>
          <StatusRow label={t('status.healthy')} testId="healthy-services">
            {overview?.healthy_services}
          </StatusRow>
          {overview && overview.unhealthy_services > 0 && (
            <StatusRow label={t('status.unhealthy')} testId="unhealthy-services">
              <span className="text-red-600 dark:text-red-400">{overview.unhealthy_services}</span>
            </StatusRow>
          )}
        </dl>
      </CardContent>
    </Card>
  );
}
