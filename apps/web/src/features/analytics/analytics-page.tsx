import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { Card, CardContent } from '../../components/ui/card';
import { messageOf } from '../../lib/api';
import { notify } from '../../lib/notify';
import { useErrorToast } from '../../lib/use-error-toast';
import { useUtilization } from './use-utilization';
import { UtilizationTable } from './utilization-table';

/** Analytics (docs/console.md §2.11); a failed load shows an alert and a toast 'Error fetching stats'. */
export function AnalyticsPage() {
  const { t } = useTranslation('analytics');
  const utilization = useUtilization();
  const failure = utilization.isError ? messageOf(utilization.error, t('networkError')) : undefined;

  useErrorToast(utilization.error, (error) => notify.error(t('errorTitle'), messageOf(error, t('networkError'))));

  return (
    <section className="space-y-6">
      <PageHeader title={t('title')} description={t('description')} />
      {failure && <ErrorAlert title={t('errorTitle')}>{failure}</ErrorAlert>}
      <Card>
        <CardContent className="pt-3">
          <UtilizationTable rows={utilization.isError ? [] : utilization.data} />
        </CardContent>
      </Card>
    </section>
  );
}
