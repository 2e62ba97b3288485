import { useQueryClient } from '@tanstack/react-query';
import { type PublicUser, routes } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { useCallback, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { selfQueryKey } from '../../lib/self';
import { displayNameOf } from '../../lib/session';
import { patchUser, refreshUsers } from './use-users';
import type { ManageAction } from './user-rules';

export type UserBusy = ManageAction | 'delete';

/** The success toast of each action: a title and a line naming the user. */
const doneKeys = {
  enable: 'toasts.enabled',
  disable: 'toasts.disabled',
  promote: 'toasts.promoted',
  demote: 'toasts.demoted',
} as const satisfies Record<ManageAction, ParseKeys<'users'>>;

/**
 * Enable, disable, promote, demote (POST /user/manage) and delete (DELETE /user/{id}) of the Users page.
 * One action at a time per user: a second one on a busy user is ignored and the row reads `busy[id]`.
 */
export function useUserActions() {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState<Record<number, UserBusy>>({});
  // The state above is for rendering; this set guards against a double click before React re-renders.
  const running = useRef(new Set<number>());

  const exclusive = useCallback(async (id: number, action: UserBusy, work: () => Promise<void>) => {
    if (running.current.has(id)) return;
    running.current.add(id);
    setBusy((all) => ({ ...all, [id]: action }));
    try {
      await work();
    } finally {
      running.current.delete(id);
      setBusy(({ [id]: _done, ...rest }) => rest);
    }
  }, []);

  const manage = useCallback(
    (user: PublicUser, action: ManageAction) =>
      exclusive(user.id, action, async () => {
        try {
          const updated = await call(routes.users.manage, {
            body: { username: user.username, action },
            notify: false,
          });
          patchUser(queryClient, updated);
          notify.success(t(doneKeys[action]), t(`${doneKeys[action]}Description`, { name: displayNameOf(user) }));
          void refreshUsers(queryClient);
        } catch (err) {
          showFailure(err, t, { failed: t('toasts.operationFailed') });
        }
      }),
    [exclusive, queryClient, t],
  );

  /** Deletes the user; true when it worked. */
  const remove = useCallback(
    async (user: PublicUser): Promise<boolean> => {
      let removed = false;
      await exclusive(user.id, 'delete', async () => {
        try {
          await call(routes.users.remove, { params: { id: user.id }, notify: false });
          removed = true;
          notify.success(t('toasts.deleted'), t('toasts.deletedDescription', { name: displayNameOf(user) }));
          await refreshUsers(queryClient);
        } catch (err) {
          showFailure(err, t, { failed: t('toasts.deleteFailed') });
        }
      });
      return removed;
    },
    [exclusive, queryClient, t],
  );

  /** After the signed-in user edits their own account, the top bar's name follows. */
  const selfChanged = useCallback(() => queryClient.invalidateQueries({ queryKey: selfQueryKey }), [queryClient]);

  return { busy, manage, remove, selfChanged };
}
