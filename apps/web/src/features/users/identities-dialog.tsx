import { type HeldIdentity, IdentityProvider, type PublicUser } from '@toolport/contract';
import { KeyRound, Link2, Unlink } from 'lucide-react';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from '../../components/ui/alert';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { Select } from '../../components/ui/select';
import { Skeleton } from '../../components/ui/skeleton';
import { failureText } from '../../lib/failure';
import { providerEnabled, providerNames } from '../../lib/oauth-providers';
import { useServerStatus } from '../../lib/server-status';
import { displayNameOf } from '../../lib/session';
import { useHeldIdentities, useIdentityActions, useLinkedIdentities } from './use-identities';

/** The providers an admin can link: GitHub and Google when switched on, and every listed OpenID Connect provider. */
function useProviderChoices(): { key: string; label: string }[] {
  const status = useServerStatus().data;
  const builtIn = (['github', 'google'] as const)
    .filter((p) => providerEnabled(status, p))
    .map((p) => ({ key: p, label: providerNames[p] }));
  return [...builtIn, ...(status?.oidc_providers ?? []).map((p) => ({ key: `oidc:${p.slug}`, label: p.label }))];
}

/** One held sign-in, as a line of text: who, from where, why. */
export function HeldSummary({ held }: { held: HeldIdentity }) {
  const { t, i18n } = useTranslation('users');
  const when = new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }).format(held.last_seen_at);
  return (
    <div className="min-w-0 flex-1 space-y-0.5">
      <p className="truncate font-medium" data-i18n-data>
        {held.display_name || held.subject}
        {held.email && <span className="ml-2 font-normal text-slate-600 dark:text-slate-400">{held.email}</span>}
      </p>
      <p className="text-xs text-slate-600 dark:text-slate-400">
        {t('held.line', { provider: held.provider_label, subject: held.subject, count: held.attempts, when })}
      </p>
      <p className="text-xs text-slate-600 dark:text-slate-400">{t(`held.reasons.${held.reason}`)}</p>
    </div>
  );
}

/**
 * A user's sign-in identities (decision 0063): the linked ones with Unlink, the sign-ins held for an admin with
 * "Link to this user" (those whose email is this user's first), and a provider and subject typed in.
 */
export function IdentitiesDialog({ user, onOpenChange }: { user: PublicUser | null; onOpenChange(open: boolean): void }) {
  const { t } = useTranslation('users');
  return (
    <Dialog open={user !== null} onOpenChange={onOpenChange}>
      <DialogContent className="sm:max-w-2xl">
        <DialogHeader>
          <DialogTitle>{t('identities.title', { name: user ? displayNameOf(user) : '' })}</DialogTitle>
          <DialogDescription>{t('identities.description')}</DialogDescription>
        </DialogHeader>
        {user && <IdentitiesBody user={user} />}
      </DialogContent>
    </Dialog>
  );
}

function IdentitiesBody({ user }: { user: PublicUser }) {
  const { t } = useTranslation('users');
  const linked = useLinkedIdentities(user.id);
  const held = useHeldIdentities();
  const actions = useIdentityActions();
  const choices = useProviderChoices();
  const [provider, setProvider] = useState('');
  const [subject, setSubject] = useState('');
  const [error, setError] = useState('');
  const chosen = provider || choices[0]?.key || '';
  const busy = actions.link.isPending || actions.unlink.isPending;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = subject.trim();
    if (!IdentityProvider.safeParse(chosen).success) return setError(t('identities.errors.provider'));
    if (!trimmed) return setError(t('identities.errors.subjectRequired'));
    if (trimmed.length > 255) return setError(t('identities.errors.subjectTooLong'));
    setError('');
    actions.link.mutate({ user, body: { provider: chosen, subject: trimmed } }, { onSuccess: () => setSubject('') });
  };
  // Those whose address belongs to this user first: they most likely are this user.
  const heldRows = [...(held.data ?? [])].sort((a, b) => Number(b.user_id === user.id) - Number(a.user_id === user.id));

  return (
    <div className="space-y-6">
      <section aria-labelledby="linked-identities" className="space-y-2">
        <h3 id="linked-identities" className="text-sm font-semibold">
          {t('identities.linkedTitle')}
        </h3>
        {linked.isPending ? (
          <Skeleton className="h-9 w-full" />
        ) : linked.isError ? (
          <ErrorAlert title={t('identities.loadFailed')}>{failureText(linked.error, t)}</ErrorAlert>
        ) : linked.data.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">{t('identities.none')}</p>
        ) : (
          <ul className="divide-y divide-slate-200 dark:divide-slate-800" aria-label={t('identities.linkedTitle')}>
            {linked.data.map((identity) => (
              <li key={identity.id} data-testid="linked-identity" className="flex flex-wrap items-center gap-3 py-2">
                <KeyRound aria-hidden="true" className="size-4 shrink-0 text-slate-500" />
                <div className="min-w-0 flex-1">
                  <p className="font-medium">{identity.provider_label}</p>
                  <p className="truncate text-xs text-slate-600 dark:text-slate-400" data-i18n-data>
                    {identity.subject}
                    {identity.email ? ` · ${identity.email}` : ''}
                  </p>
                </div>
                <Button
                  variant="outline"
                  size="sm"
                  disabled={busy}
                  aria-label={t('identities.unlinkOne', { provider: identity.provider_label, subject: identity.subject })}
                  onClick={() => actions.unlink.mutate({ userId: user.id, identityId: identity.id })}
                >
                  <Unlink aria-hidden="true" />
                  {t('identities.unlink')}
                </Button>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="held-for-user" className="space-y-2">
        <h3 id="held-for-user" className="text-sm font-semibold">
          {t('held.title')}
        </h3>
        {heldRows.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">{t('held.none')}</p>
        ) : (
          <ul className="max-h-64 divide-y divide-slate-200 overflow-y-auto dark:divide-slate-800" aria-label={t('held.title')}>
            {heldRows.map((h) => (
              <li key={h.id} data-testid="held-identity" className="flex flex-wrap items-center gap-3 py-2">
                <HeldSummary held={h} />
                {h.user_id === user.id && <Badge tone="info">{t('held.matchesThisUser')}</Badge>}
                <Button
                  size="sm"
                  disabled={busy}
                  aria-label={t('held.linkTo', { name: user.username, who: h.display_name || h.subject })}
                  onClick={() => actions.link.mutate({ user, body: { provider: h.provider, subject: h.subject } })}
                >
                  <Link2 aria-hidden="true" />
                  {t('held.linkHere')}
                </Button>
              </li>
            ))}
          </ul>
        )}
      </section>

      <form onSubmit={submit} className="space-y-3" aria-labelledby="link-by-hand" noValidate>
        <h3 id="link-by-hand" className="text-sm font-semibold">
          {t('identities.byHandTitle')}
        </h3>
        <p className="text-xs text-slate-600 dark:text-slate-400">{t('identities.byHandHint')}</p>
        <div className="grid gap-3 sm:grid-cols-[12rem_1fr]">
          <div className="space-y-1">
            <Label htmlFor="identity-provider">{t('identities.provider')}</Label>
            <Select id="identity-provider" value={chosen} onChange={(e) => setProvider(e.target.value)}>
              {choices.map((c) => (
                <option key={c.key} value={c.key}>
                  {c.label}
                </option>
              ))}
            </Select>
          </div>
          <div className="space-y-1">
            <Label htmlFor="identity-subject">{t('identities.subject')}</Label>
            <Input
              id="identity-subject"
              value={subject}
              maxLength={255}
              onChange={(e) => setSubject(e.target.value)}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? 'identity-error' : undefined}
            />
          </div>
        </div>
        {error && (
          <p id="identity-error" role="alert" className="text-sm text-red-600 dark:text-red-400">
            {error}
          </p>
        )}
        <Button type="submit" disabled={busy || choices.length === 0}>
          <Link2 aria-hidden="true" />
          {t('identities.link')}
        </Button>
      </form>
    </div>
  );
}
