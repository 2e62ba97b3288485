import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type HeldIdentity, type LinkIdentityRequest, type PublicUser, routes } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { displayNameOf } from '../../lib/session';
import { refreshUsers } from './use-users';

/** Apart from the users lists' key: those lists are patched row by row, and held sign-ins are not users. */
export const identitiesKey = ['user-identities'] as const;
const heldKey = [...identitiesKey, 'held'] as const;
const linkedKey = (userId: number) => [...identitiesKey, 'user', userId] as const;

/** Sign-ins refused until an admin links them (GET /user/held_identities), the latest first. */
export function useHeldIdentities() {
  return useQuery({ queryKey: heldKey, queryFn: ({ signal }) => call(routes.oauth.held, { signal, notify: false }) });
}

/** The identities linked to one user (GET /user/{id}/identities). */
export function useLinkedIdentities(userId: number) {
  return useQuery({
    queryKey: linkedKey(userId),
    queryFn: ({ signal }) => call(routes.oauth.identities, { params: { id: userId }, signal, notify: false }),
  });
}

/**
 * Link (POST /user/{id}/identities), unlink (DELETE /user/{id}/identities/{identityId}) and dismiss a held sign-in
 * (DELETE /user/held_identities/{id}); each refreshes the lists it changes and says how it went.
 */
export function useIdentityActions() {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const changed = () => {
    void queryClient.invalidateQueries({ queryKey: identitiesKey });
    // The Bindings column shows GitHub and Google identities.
    void refreshUsers(queryClient);
  };
  const link = useMutation({
    mutationFn: (req: { user: Pick<PublicUser, 'id' | 'username' | 'display_name'>; body: LinkIdentityRequest }) =>
      call(routes.oauth.link, { params: { id: req.user.id }, body: req.body, notify: false }),
    onSuccess: (_data, req) => {
      notify.success(t('identities.linked'), t('identities.linkedDescription', { name: displayNameOf(req.user) }));
      changed();
    },
    onError: (err) => showFailure(err, t, { failed: t('identities.linkFailed') }),
  });
  const unlink = useMutation({
    mutationFn: (req: { userId: number; identityId: number }) =>
      call(routes.oauth.unlink, { params: { id: req.userId, identityId: req.identityId }, notify: false }),
    onSuccess: () => {
      notify.success(t('identities.unlinked'));
      changed();
    },
    onError: (err) => showFailure(err, t, { failed: t('identities.unlinkFailed') }),
  });
  const dismiss = useMutation({
    mutationFn: (held: HeldIdentity) => call(routes.oauth.dismissHeld, { params: { id: held.id }, notify: false }),
    onSuccess: () => {
      notify.success(t('held.dismissed'));
      changed();
    },
    onError: (err) => showFailure(err, t, { failed: t('identities.unlinkFailed') }),
  });
  return { link, unlink, dismiss };
}
