import { type PublicUser, routes } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { call } from '../../lib/api';
import { displayNameOf } from '../../lib/session';
import { ConnectedAppsList } from '../profile';

/** An admin's view of one user's connected apps (OAuth grants of MCP clients), each with Revoke. */
export function UserAppsDialog({ user, onOpenChange }: { user: PublicUser | null; onOpenChange(open: boolean): void }) {
  const { t } = useTranslation('users');
  return (
    <Dialog open={user !== null} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('apps.title', { name: user ? displayNameOf(user) : '' })}</DialogTitle>
          <DialogDescription>{t('apps.description')}</DialogDescription>
        </DialogHeader>
        {user && (
          <ConnectedAppsList
            queryKey={['oauth-server', 'user-apps', user.id]}
            load={() => call(routes.oauthServer.userApps, { params: { userId: user.id }, notify: false })}
            revoke={(id) => call(routes.oauthServer.revokeUserApp, { params: { userId: user.id, id }, notify: false })}
          />
        )}
      </DialogContent>
    </Dialog>
  );
}
