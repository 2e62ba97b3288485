import { useTranslation } from 'react-i18next';
import { Outlet } from 'react-router';
import { ErrorAlert } from '../components/ui/alert';
import { isAdmin, useSession } from '../lib/session';
import { useDocumentTitle } from '../lib/use-document-title';

/**
 * The admin screens (Market, Users, Logs, Preferences). The server refuses their calls to non-admins anyway;
 * this says so once instead of letting the page fire a burst of permission-denied toasts.
 */
export function RequireAdmin() {
  const { user } = useSession();
  if (isAdmin(user)) return <Outlet />;
  return <AdminOnlyNotice />;
}

/** The notice in place of an admin screen, with a tab title of its own (issue 29). */
function AdminOnlyNotice() {
  const { t } = useTranslation();
  useDocumentTitle(t('adminOnly.title'));
  return (
    <ErrorAlert title={t('adminOnly.title')} className="max-w-xl">
      {t('adminOnly.description')}
    </ErrorAlert>
  );
}
