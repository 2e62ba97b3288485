import type { TFunction } from 'i18next';
import { ApiError } from '../../lib/api';
import { notify } from '../../lib/notify';

/**
 * The one toast for a failed call of this screen (its calls pass `notify: false`, so two toasts never race).
 * It is titled by what failed (loading the list, deleting, an operation) and says why: the server's message,
 * the network error or the unknown-error text (docs/console.md §8 "users"). A 403 and a 5xx keep the console's
 * permission-denied and server-error toasts; a 401 has already sent the user to sign in.
 */
export function showUsersFailure(err: unknown, t: TFunction<['users', 'common']>, title: string): void {
  if (err instanceof ApiError) {
    if (err.kind === 'unauthorized' || err.kind === 'aborted') return;
    if (err.kind === 'forbidden' || err.kind === 'server') {
      notify.error(t(`common:errors.${err.kind}.title`), t(`common:errors.${err.kind}.description`));
      return;
    }
    if (err.kind === 'network') {
      notify.error(title, t('common:errors.network.description'));
      return;
    }
    notify.error(title, err.serverMessage || t('common:errors.other.description'));
    return;
  }
  // A browser's own error text would not be in the user's language.
  notify.error(title, t('common:errors.other.description'));
}
