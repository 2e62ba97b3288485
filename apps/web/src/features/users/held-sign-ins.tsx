import { Link2, X } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { HeldSummary } from './identities-dialog';
import { useHeldIdentities, useIdentityActions } from './use-identities';

/**
 * Sign-ins refused until an administrator links them (decision 0063), above the users table while there are
 * any: each with "Link to {account}" when its address named one, and Dismiss. Others are linked from a user's
 * identities dialog.
 */
export function HeldSignIns() {
  const { t } = useTranslation('users');
  const held = useHeldIdentities();
  const actions = useIdentityActions();
  const rows = held.data ?? [];
  if (rows.length === 0) return null;
  const busy = actions.link.isPending || actions.dismiss.isPending;
  return (
    <section
      aria-labelledby="held-sign-ins"
      data-testid="held-sign-ins"
      className="space-y-3 rounded-lg border border-amber-300 bg-amber-50 p-4 dark:border-amber-900 dark:bg-amber-950/40"
    >
      <div>
        <h2 id="held-sign-ins" className="font-semibold">
          {t('held.pageTitle', { count: rows.length })}
        </h2>
        <p className="text-sm text-slate-700 dark:text-slate-300">{t('held.pageDescription')}</p>
      </div>
      <ul className="divide-y divide-amber-200 dark:divide-amber-900">
        {rows.map((h) => (
          <li key={h.id} data-testid="held-sign-in" className="flex flex-wrap items-center gap-3 py-2">
            <HeldSummary held={h} />
            {h.user_id !== null && h.user_username && (
              <Button
                size="sm"
                disabled={busy}
                onClick={() =>
                  actions.link.mutate({
                    user: { id: h.user_id ?? 0, username: h.user_username, display_name: '' },
                    body: { provider: h.provider, subject: h.subject },
                  })
                }
              >
                <Link2 aria-hidden="true" />
                {t('held.linkToSuggested', { name: h.user_username })}
              </Button>
            )}
            <Button
              variant="ghost"
              size="sm"
              disabled={busy}
              aria-label={t('held.dismissOne', { who: h.display_name || h.subject })}
              onClick={() => actions.dismiss.mutate(h)}
            >
              <X aria-hidden="true" />
              {t('held.dismiss')}
            </Button>
          </li>
        ))}
      </ul>
    </section>
  );
}
