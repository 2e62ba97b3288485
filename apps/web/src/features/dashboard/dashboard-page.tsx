import { RotateCw } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { Button } from '../../components/ui/button';
import { messageOf } from '../../lib/api';
import { QuickActions } from './quick-actions';
import { RecentActivityTable } from './recent-activity-table';
import { StatCards } from './stat-cards';
import { SystemStatusCard } from './system-status-card';
import { useOverview } from './use-overview';
import { WelcomeCard } from './welcome-card';

/**
 * The dashboard (docs/console.md §2.4): loading shows the cards with placeholders of the final size, an error
 * shows the server's message (or a translated one) in their place, loaded shows the live figures.
 */
export function DashboardPage() {
  const { t } = useTranslation('dashboard');
  const overview = useOverview();
  return (
    <section className="space-y-6">
      <PageHeader title={t('title')} />
      <WelcomeCard />
      {overview.isError ? (
        <ErrorAlert title={t('loadFailedTitle')}>
          <p>{messageOf(overview.error, t('loadFailed'))}</p>
          <Button variant="outline" size="sm" className="mt-3" onClick={() => void overview.refetch()}>
            <RotateCw aria-hidden="true" />
            {t('retry')}
          </Button>
        </ErrorAlert>
      ) : (
        <StatCards overview={overview.data} />
      )}
      <div className="grid gap-6 lg:grid-cols-2">
        {!overview.isError && <SystemStatusCard overview={overview.data} />}
        <QuickActions />
      </div>
      <RecentActivityTable />
    </section>
  );
}
