import { routes } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { call } from '../../lib/api';
import { ConnectedAppsList } from './connected-apps';

export const myAppsQueryKey = ['oauth-server', 'my-apps'] as const;

/** Profile's Connected apps: the MCP clients the user allowed, when, when last used, and Revoke. */
export function ConnectedAppsCard() {
  const { t } = useTranslation('profile');
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('connectedApps.title')}</CardTitle>
        <CardDescription>{t('connectedApps.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <ConnectedAppsList
          queryKey={myAppsQueryKey}
          load={() => call(routes.oauthServer.myApps, { notify: false })}
          revoke={(id) => call(routes.oauthServer.revokeMyApp, { params: { id }, notify: false })}
        />
      </CardContent>
    </Card>
  );
}
