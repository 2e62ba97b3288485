import { useQueryClient } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { signInPath } from '../../app/return-to';
import { call } from '../../lib/api';
import { notify } from '../../lib/notify';
import { clearSession, getRefreshToken } from '../../lib/session';

/** Logout: the server revokes this session's refresh token, then the browser forgets the session. */
export function useLogout(): () => Promise<void> {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  return async () => {
    const refreshToken = getRefreshToken();
    if (refreshToken) {
      // Signed out locally whatever the answer: the access token expires on its own soon after.
      await call(routes.auth.logout, { body: { refresh_token: refreshToken }, notify: false }).catch(() => undefined);
    }
    clearSession();
    queryClient.clear();
    notify.success(t('session.signedOut'));
    navigate(signInPath, { replace: true });
  };
}
