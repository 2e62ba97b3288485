import type { ParseKeys, TFunction } from 'i18next';
import { ApiError } from '../../lib/api';
import { notify } from '../../lib/notify';
import { LocalCheckError } from './service-ids';

/** The screens whose actions this toast reports: services, and the market's install and uninstall. */
type ActionNamespace = 'services' | 'market';

/** Keys of the caller's namespace. */
export interface FailureTitles<Ns extends ActionNamespace> {
  /** Title when the server refused (its message follows) or a local check failed. */
  failed: ParseKeys<Ns>;
  /** Title when something unexpected broke before an answer was read. */
  error: ParseKeys<Ns>;
  /** Description when neither the server nor the check gave one. */
  fallback: ParseKeys<Ns>;
}

/**
 * The one toast for a failed action of this screen, whose calls pass `notify: false` so that two toasts
 * never race. Refusals (400, 404, 409 …) get a title naming the action with the server's message;
 * permission, server and network failures get the console's usual texts (docs/console.md §8); a 401 has
 * already sent the user to sign in.
 */
export function showFailure<Ns extends ActionNamespace>(err: unknown, t: TFunction<Ns>, titles: FailureTitles<Ns>): void;
// The signature above holds each caller to its own namespace's keys; the body, written once for both, reads either.
export function showFailure(err: unknown, t: TFunction<ActionNamespace>, titles: FailureTitles<ActionNamespace>): void {
  if (err instanceof LocalCheckError) {
    notify.error(t(titles.failed), t(err.messageKey));
    return;
  }
  if (err instanceof ApiError) {
    if (err.kind === 'unauthorized' || err.kind === 'aborted') return;
    if (err.kind === 'other' || err.kind === 'notFound') {
      notify.error(t(titles.failed), err.serverMessage || t(titles.fallback));
      return;
    }
    notify.error(t(`errors.${err.kind}.title`, { ns: 'common' }), t(`errors.${err.kind}.description`, { ns: 'common' }));
    return;
  }
  // A browser's own error text would not be in the user's language.
  notify.error(t(titles.error), t(titles.fallback));
}
