import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type OAuthProvider, routes, type SelfUser } from '@toolport/contract';
import { KeyRound, Link2, MessageCircle, Unlink } from 'lucide-react';
import { type ComponentType, type ReactNode, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { GitHubMark, GoogleMark } from '../../components/icons/brand-icons';
import { ConfirmDialog } from '../../components/ui/alert-dialog';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Spinner } from '../../components/ui/spinner';
import { call } from '../../lib/api';
import { rememberBindIntent } from '../../lib/bind-intent';
import { failureText } from '../../lib/failure';
import { leaveTo } from '../../lib/leave';
import { notify } from '../../lib/notify';
import { providerNames } from '../../lib/oauth-providers';
import { selfQueryKey } from '../../lib/self';
import { useServerStatus } from '../../lib/server-status';
import { saveUser } from '../../lib/session';
import { boundAccountOf, hasPassword, isLastSignInMethod, visibleProviders } from './sign-in-methods';

const marks: Record<OAuthProvider, ComponentType<{ className?: string }>> = { github: GitHubMark, google: GoogleMark };

/** One way to sign in: its mark and name, what is bound, a state badge and the row's action. */
function MethodRow(props: {
  Icon: ComponentType<{ className?: string }>;
  name: string;
  detail: string;
  bound: boolean;
  /** The badge text when it is not "Bound" / "Not bound" (the password is "Set"). */
  badge?: string;
  action?: ReactNode;
  /** Why the action is unavailable, shown under the row. */
  reason?: ReactNode;
}) {
  const { t } = useTranslation('profile');
  const id = useId();
  const { Icon } = props;
  return (
    <li aria-labelledby={`${id}-name`} className="flex flex-wrap items-center gap-x-3 gap-y-2 py-3">
      <Icon className="size-5 shrink-0" />
      <div className="min-w-0 flex-1">
        <p id={`${id}-name`} className="font-medium">
          {props.name}
        </p>
        <p className="truncate text-sm text-slate-600 dark:text-slate-400">{props.detail}</p>
      </div>
      <Badge tone={props.bound ? 'success' : 'neutral'}>
        {props.badge ?? (props.bound ? t('signInMethods.bound') : t('signInMethods.notBound'))}
      </Badge>
      {props.action}
      {props.reason}
    </li>
  );
}

/** GitHub or Google: bound (with the account) and Unbind, or not bound and Bind. */
function ProviderRow(props: {
  user: SelfUser;
  provider: OAuthProvider;
  /** Some bind or unbind is under way: the buttons wait. */
  busy: boolean;
  /** This provider's bind is starting, or the browser is leaving for it. */
  working: boolean;
  unbinding: boolean;
  onBind(): void;
  onUnbind(): void;
}) {
  const { t } = useTranslation('profile');
  const reasonId = useId();
  const { user, provider, busy } = props;
  const name = providerNames[provider];
  const account = boundAccountOf(user, provider);
  const last = isLastSignInMethod(user, provider);
  // aria-disabled, not disabled: the button stays focusable, so keyboard users reach the reason too.
  const action = account ? (
    <Button
      variant="outline"
      size="sm"
      aria-label={t('signInMethods.unbindProvider', { provider: name })}
      aria-disabled={last || busy || undefined}
      aria-describedby={last ? reasonId : undefined}
      onClick={() => !last && !busy && props.onUnbind()}
    >
      {props.unbinding ? <Spinner /> : <Unlink aria-hidden="true" />}
      {t('signInMethods.unbind')}
    </Button>
  ) : (
    <Button
      size="sm"
      aria-label={t('signInMethods.bindProvider', { provider: name })}
      aria-disabled={busy || undefined}
      onClick={() => !busy && props.onBind()}
    >
      {props.working ? <Spinner /> : <Link2 aria-hidden="true" />}
      {t('signInMethods.bind')}
    </Button>
  );
  return (
    <MethodRow
      Icon={marks[provider]}
      name={name}
      detail={account ? t('signInMethods.account', { id: account }) : t('signInMethods.notBoundHint', { provider: name })}
      bound={!!account}
      action={action}
      reason={
        last && (
          <p id={reasonId} className="basis-full text-sm text-amber-700 dark:text-amber-400">
            {t('signInMethods.lastMethod', { provider: name })}
          </p>
        )
      }
    />
  );
}

/**
 * Sign-in methods (docs/console.md §2.12, Users "bindings"): the password, and GitHub and Google when the server
 * offers them or the user is bound to them. Bind sends the browser through the provider and back to
 * /oauth/{provider}; Unbind asks first, and the last way to sign in cannot be unbound.
 */
export function SignInMethodsCard({ user }: { user: SelfUser }) {
  const { t } = useTranslation(['profile', 'common']);
  const queryClient = useQueryClient();
  const titleId = useId();
  const { data: status } = useServerStatus();
  // The provider stays set while the dialog fades out, so its title does not change under the user.
  const [confirm, setConfirm] = useState<{ open: boolean; provider: OAuthProvider }>({ open: false, provider: 'github' });
  // Set once the browser is on its way to the provider: the page is about to go, keep the button busy.
  const [leavingFor, setLeavingFor] = useState<OAuthProvider | null>(null);
  useEffect(() => {
    // Back from the provider through the browser's history, the page comes out of its cache as it was left.
    const restored = (event: PageTransitionEvent) => event.persisted && setLeavingFor(null);
    window.addEventListener('pageshow', restored);
    return () => window.removeEventListener('pageshow', restored);
  }, []);

  const bind = useMutation({
    // The bearer token goes with this call, so the server ties the pending sign-in to this account.
    mutationFn: (provider: OAuthProvider) => call(routes.oauth.authorize[provider], { query: { bind: '1' }, notify: false }),
    onSuccess: ({ url }, provider) => {
      setLeavingFor(provider);
      rememberBindIntent(provider, url);
      leaveTo(url);
    },
    onError: (err, provider) => notify.error(t('signInMethods.bindFailed', { provider: providerNames[provider] }), failureText(err, t)),
  });

  const unbind = useMutation({
    mutationFn: (provider: OAuthProvider) => call(routes.oauth.unbind, { params: { provider }, notify: false }),
    onSuccess: (updated, provider) => {
      queryClient.setQueryData<SelfUser>(selfQueryKey, (old) => (old ? { ...old, ...updated } : old));
      saveUser(updated);
      notify.success(t('signInMethods.unbound', { provider: providerNames[provider] }));
    },
    onError: (err, provider) => {
      notify.error(t('signInMethods.unbindFailed', { provider: providerNames[provider] }), failureText(err, t));
      // The refusal may come from a change elsewhere (another tab bound or unbound): show the server's view.
      void queryClient.invalidateQueries({ queryKey: selfQueryKey });
    },
  });

  const busy = bind.isPending || unbind.isPending || leavingFor !== null;
  const providers = visibleProviders(status, user);
  const confirmName = providerNames[confirm.provider];
  const confirmAccount = boundAccountOf(user, confirm.provider);

  return (
    <Card role="region" aria-labelledby={titleId}>
      <CardHeader>
        <CardTitle id={titleId}>{t('signInMethods.title')}</CardTitle>
        <CardDescription>{t('signInMethods.description')}</CardDescription>
      </CardHeader>
      <CardContent className="space-y-2">
        <ul className="divide-y divide-slate-100 dark:divide-slate-800">
          {hasPassword(user) && (
            <MethodRow
              Icon={KeyRound}
              name={t('signInMethods.password')}
              detail={t('signInMethods.passwordDetail')}
              badge={t('signInMethods.passwordSet')}
              bound
            />
          )}
          {providers.map((provider) => (
            <ProviderRow
              key={provider}
              user={user}
              provider={provider}
              busy={busy}
              working={(bind.isPending && bind.variables === provider) || leavingFor === provider}
              unbinding={unbind.isPending && unbind.variables === provider}
              onBind={() => bind.mutate(provider)}
              onUnbind={() => setConfirm({ open: true, provider })}
            />
          ))}
          {user.wechat_id && (
            <MethodRow
              Icon={MessageCircle}
              name={t('loginMethod.wechat')}
              detail={t('signInMethods.account', { id: user.wechat_id })}
              bound
            />
          )}
        </ul>
        {providers.length === 0 && <p className="text-sm text-slate-600 dark:text-slate-400">{t('signInMethods.noProviders')}</p>}
      </CardContent>
      <ConfirmDialog
        open={confirm.open}
        onOpenChange={(open) => setConfirm((c) => ({ ...c, open }))}
        title={t('signInMethods.confirmTitle', { provider: confirmName })}
        description={t('signInMethods.confirmDescription', { provider: confirmName, id: confirmAccount })}
        confirmLabel={t('signInMethods.unbind')}
        cancelLabel={t('common:actions.cancel')}
        destructive
        onConfirm={() => unbind.mutate(confirm.provider)}
      />
    </Card>
  );
}
