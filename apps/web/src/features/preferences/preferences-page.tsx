import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { Card, CardContent, CardHeader } from '../../components/ui/card';
import { Skeleton } from '../../components/ui/skeleton';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { useErrorToast } from '../../lib/use-error-toast';
import { AllowedOriginsCard } from './allowed-origins-card';
import { AuditForwardingCard } from './audit-forwarding-card';
import { EmbeddingsCard } from './embeddings-card';
import { McpClientSignInCard } from './mcp-client-sign-in-card';
import { isStartupStrategy } from './preference-rules';
import { ProviderCard } from './provider-card';
import { RemoteServicesCard } from './remote-services-card';
import { ServerAddressCard } from './server-address-card';
import { StartupStrategyCard } from './startup-strategy-card';
import { usePreferences } from './use-preferences';

function CardSkeleton({ rows }: { rows: number }) {
  return (
    <Card aria-hidden="true">
      <CardHeader>
        <Skeleton className="h-5 w-40" />
        <Skeleton className="h-4 w-64" />
      </CardHeader>
      <CardContent className="space-y-3">
        {Array.from({ length: rows }, (_, i) => `row-${i}`).map((row) => (
          <Skeleton key={row} className="h-9 w-full" />
        ))}
      </CardContent>
    </Card>
  );
}

/**
 * Preferences (docs/console.md §2.13, admin): the server address, the stdio startup strategy, the two sign-in
 * providers, whether remote services may use private networks and discovery search's embeddings provider, each saved on its
 * own through PUT /api/option/.
 */
export function PreferencesPage() {
  const { t } = useTranslation('preferences');
  const query = usePreferences();
  const prefs = query.data;

  useErrorToast(query.error, (error) => notify.error(t('loadFailed'), failureText(error, t)));

  return (
    <section className="space-y-6">
      <PageHeader title={t('title')} description={t('description')} />
      {query.isError && <ErrorAlert title={t('loadFailed')}>{failureText(query.error, t)}</ErrorAlert>}
      {query.isPending && (
        <div className="grid gap-6 lg:grid-cols-2" data-testid="preferences-loading">
          <CardSkeleton rows={1} />
          <CardSkeleton rows={2} />
          <CardSkeleton rows={4} />
          <CardSkeleton rows={4} />
          <CardSkeleton rows={1} />
        </div>
      )}
      {prefs && (
        <div className="grid items-start gap-6 lg:grid-cols-2">
          <ServerAddressCard saved={prefs.ServerAddress ?? ''} />
          <StartupStrategyCard
            saved={isStartupStrategy(prefs.StdioServiceStartupStrategy) ? prefs.StdioServiceStartupStrategy : 'boot'}
            idleMinutes={prefs.StdioIdleTimeoutMinutes ?? '10'}
          />
          <ProviderCard provider="github" prefs={prefs} />
          <ProviderCard provider="google" prefs={prefs} />
          <RemoteServicesCard saved={prefs.AllowPrivateNetworkUpstreams !== 'false'} />
          <AllowedOriginsCard saved={prefs.AllowedOrigins ?? ''} />
          <McpClientSignInCard saved={prefs.OAuthClientRegistrationEnabled !== 'false'} />
          <EmbeddingsCard prefs={prefs} />
          <AuditForwardingCard saved={prefs.AuditLogForwarding === 'true'} />
        </div>
      )}
    </section>
  );
}
