import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { Card, CardContent, CardHeader } from '../../components/ui/card';
import { Skeleton } from '../../components/ui/skeleton';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { useSelf } from '../../lib/self';
import { useErrorToast } from '../../lib/use-error-toast';
import { AccountSummaryCard } from './account-summary-card';
import { ApiKeyCard } from './api-key-card';
import { ChangePasswordCard } from './change-password-card';
import { ConnectedAppsCard } from './connected-apps-card';
import { LoginMethodBadge } from './login-method-badge';
import { PersonalInfoCard } from './personal-info-card';
import { SignInMethodsCard } from './sign-in-methods-card';

function CardSkeleton() {
  return (
    <Card aria-hidden="true">
      <CardHeader>
        <Skeleton className="h-5 w-40" />
        <Skeleton className="h-4 w-64" />
      </CardHeader>
      <CardContent className="space-y-3">
        <Skeleton className="h-9 w-full" />
        <Skeleton className="h-9 w-full" />
        <Skeleton className="h-9 w-full" />
      </CardContent>
    </Card>
  );
}

/** Profile (docs/console.md §2.12): login method, personal info or a read-only summary, API key, sign-in methods, password. */
export function ProfilePage() {
  const { t } = useTranslation('profile');
  const self = useSelf();
  const failure = self.isError ? failureText(self.error, t) : undefined;

  useErrorToast(self.error, (error) => notify.error(t('loadFailed'), failureText(error, t)));

  const user = self.data;
  const passwordUser = user?.login_method === 'password';
  return (
    <section className="space-y-6">
      <PageHeader title={t('title')} description={t('description')} actions={user && <LoginMethodBadge method={user.login_method} />} />
      {failure && <ErrorAlert title={t('loadFailed')}>{failure}</ErrorAlert>}
      {self.isPending && (
        <div className="grid gap-6 lg:grid-cols-2">
          <CardSkeleton />
          <CardSkeleton />
        </div>
      )}
      {user && (
        <div className="grid items-start gap-6 lg:grid-cols-2">
          {passwordUser ? <PersonalInfoCard user={user} /> : <AccountSummaryCard user={user} />}
          <ApiKeyCard apiKey={user.token} />
          <SignInMethodsCard user={user} />
          {passwordUser && <ChangePasswordCard />}
          <ConnectedAppsCard />
        </div>
      )}
    </section>
  );
}
