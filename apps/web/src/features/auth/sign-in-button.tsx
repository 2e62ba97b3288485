import { LogIn } from 'lucide-react';
import { lazy } from 'react';
import { useTranslation } from 'react-i18next';
import { LazyDialogButton } from '../../components/lazy-dialog-button';

// Loaded on first open: most visitors sign in on the /login page.
const SignInDialog = lazy(() => import('./sign-in-dialog'));

/** The top bar's login button for signed-out visitors: opens the sign-in form in a dialog. */
export function SignInButton() {
  const { t } = useTranslation();
  return (
    <LazyDialogButton dialog={SignInDialog}>
      <LogIn aria-hidden="true" />
      {t('nav.login')}
    </LazyDialogButton>
  );
}
