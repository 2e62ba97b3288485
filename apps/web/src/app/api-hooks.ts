import type { QueryClient } from '@tanstack/react-query';
import type { i18n } from 'i18next';
import { type ApiHooks, setApiHooks } from '../lib/api';
import { installedServicesKey } from '../lib/installed-services';
import { notify } from '../lib/notify';
import { markSessionEnded, signInPath } from './return-to';

interface Navigator {
  navigate(to: string, options: { replace?: boolean; state?: unknown }): unknown;
  state: { location: { pathname: string; search: string; hash: string } };
}

/**
 * The global answer to failed calls (docs/console.md §8): a toast per kind of failure, and on a 401 the way
 * back to the sign-in page, remembering where the user was so they return there after signing in.
 */
export function apiHooksFor(router: Navigator, i18n: i18n, queryClient: QueryClient): ApiHooks {
  const t = i18n.t.bind(i18n);
  return {
    notify(kind, serverMessage) {
      if (kind === 'other') {
        notify.error(t('common:errors.other.title'), serverMessage || t('common:errors.other.description'));
        return;
      }
      notify.error(t(`common:errors.${kind}.title`), t(`common:errors.${kind}.description`));
    },
    signedOut() {
      queryClient.clear();
      // The sign-in page says the session ended; the page guard may get there first, without this state.
      markSessionEnded();
      const { pathname, search, hash } = router.state.location;
      if (pathname === '/login') return;
      void router.navigate(signInPath, { replace: true, state: { from: `${pathname}${search}${hash}`, expired: true } });
    },
  };
}

export function installApiHooks(router: Navigator, i18n: i18n, queryClient: QueryClient): void {
  setApiHooks(apiHooksFor(router, i18n, queryClient));
  // The server words a service's reason (a failed install's) in the language each request asks for: after a
  // change of language the list is asked for again, in the new one (the page's language is set first).
  i18n.on('languageChanged', () => void queryClient.invalidateQueries({ queryKey: installedServicesKey }));
}
