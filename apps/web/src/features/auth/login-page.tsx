import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { clearSessionEnded, returnPath, sessionEnded } from '../../app/return-to';
import { Card, CardContent, CardHeader } from '../../components/ui/card';
import { useSession } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { SignInForm } from './sign-in-form';

/** /login: signing in here returns the user to the page they were sent away from (docs/console.md §2.1). */
export function LoginPage() {
  const { t } = useTranslation(['auth', 'common']);
  const location = useLocation();
  const navigate = useNavigate();
  const { token } = useSession();
  const target = returnPath(location.state);
  // Read once per visit of the page: the notice stays while the user signs in, and is gone next time.
  const [ended] = useState(() => sessionEnded(location.state));
  useEffect(() => clearSessionEnded(), []);
  useDocumentTitle(t('signInTo', { name: t('common:productName') }));

  if (token) return <Navigate to={target} replace />;
  return (
    <div className="flex justify-center py-4 sm:py-10">
      <Card className="w-full max-w-sm">
        <CardHeader className="items-center text-center">
          <h1 className="text-xl font-semibold">{t('signInTo', { name: t('common:productName') })}</h1>
          <p className="text-sm text-slate-600 dark:text-slate-400">{t('welcomeBack')}</p>
        </CardHeader>
        <CardContent className="space-y-4">
          {ended && (
            <p
              role="status"
              className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-100"
            >
              {t('sessionEnded')}
            </p>
          )}
          <SignInForm onSignedIn={() => navigate(target, { replace: true })} />
        </CardContent>
      </Card>
    </div>
  );
}
