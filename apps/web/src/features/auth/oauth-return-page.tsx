import { useQueryClient } from '@tanstack/react-query';
import { type OAuthProvider, routes, type SelfUser } from '@toolport/contract';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { takeProviderReturn } from '../../app/return-to';
import { ErrorAlert } from '../../components/ui/alert';
import { Button } from '../../components/ui/button';
import { Card, CardContent } from '../../components/ui/card';
import { Spinner } from '../../components/ui/spinner';
import { ApiError, call } from '../../lib/api';
import { forgetBindIntent, isBindReturn } from '../../lib/bind-intent';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { providerNames } from '../../lib/oauth-providers';
import { selfQueryKey } from '../../lib/self';
import { useServerStatus } from '../../lib/server-status';
import { readSession, saveSession, saveUser } from '../../lib/session';
import { signInFailure } from './sign-in-failure';

/** GitHub, Google, or an OpenID Connect provider by slug (`oidc:{slug}`, decision 0048). */
export type ReturnProvider = OAuthProvider | `oidc:${string}`;

const oidcSlugOf = (provider: ReturnProvider): string | undefined => (provider.startsWith('oidc:') ? provider.slice(5) : undefined);

/**
 * The provider's name as people write it: an OpenID Connect provider's label from the server's status;
 * undefined while that status is still coming, its slug only when the status does not name it.
 */
function useProviderName(provider: ReturnProvider): string | undefined {
  const { data: status, isPending } = useServerStatus();
  const slug = oidcSlugOf(provider);
  if (slug === undefined) return providerNames[provider as OAuthProvider];
  const label = status?.oidc_providers.find((p) => p.slug === slug)?.label;
  if (label) return label;
  return isPending ? undefined : slug;
}

/** The server's half of the return: the provider's own callback route. */
function finishAtServer(provider: ReturnProvider, query: { code: string; state?: string }) {
  const slug = oidcSlugOf(provider);
  if (slug !== undefined) return call(routes.oauth.oidcCallback, { params: { slug }, query, auth: false, notify: false });
  return call(routes.oauth.callback[provider as OAuthProvider], { query, auth: false, notify: false });
}

/** Refusals that only a bind gets: the return is a bind even when this browser did not remember starting one. */
const bindRefusals = new Set(['oauth_identity_taken', 'oauth_already_bound']);
const isBindRefusal = (error: unknown) => error instanceof ApiError && !!error.code && bindRefusals.has(error.code);

/** Why the exchange failed; kept as data, not text, so a language switch re-translates it. */
type Failure = { reason: 'providerError' } | { reason: 'missingCode' } | { reason: 'exchange'; error: unknown };

function FailureMessage({ failure, name, binding }: { failure: Failure; name: string; binding: boolean }) {
  const { t } = useTranslation('auth');
  if (failure.reason === 'providerError') return <>{t('oauth.providerError', { provider: name })}</>;
  if (failure.reason === 'missingCode') return <>{t('oauth.missingCode')}</>;
  // A bind has no password to blame: its fallback is the general one, not the sign-in form's.
  return <>{binding ? failureText(failure.error, t) : signInFailure(failure.error, t).description}</>;
}

/**
 * /oauth/github and /oauth/google (docs/console.md §2.16): the provider sends the browser back here with
 * `code` and `state` (or `error`); the server exchanges the code for a session, then the dashboard opens.
 * A bind started from the profile comes back here too: the answer's `mode` is then 'bind', and the
 * profile opens again with the provider bound; its failures lead back to the profile, not to sign-in.
 */
export function OAuthReturnPage({ provider }: { provider: ReturnProvider }) {
  const { t } = useTranslation('auth');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const providerName = useProviderName(provider);
  // The answer may come before the status that names the provider: its toast takes the latest name.
  const nameNow = useRef('');
  nameNow.current = providerName ?? oidcSlugOf(provider) ?? '';
  const [failure, setFailure] = useState<Failure | null>(null);
  // Read before the server answers, so the spinner and a failure already speak of binding.
  const [binding, setBinding] = useState(() => isBindReturn(provider, params.get('state')));
  // A code can be exchanged once; the ref keeps a re-run of the effect (React's strict mode) from trying twice.
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    forgetBindIntent();
    const code = params.get('code');
    if (params.get('error')) return setFailure({ reason: 'providerError' });
    if (!code) return setFailure({ reason: 'missingCode' });
    finishAtServer(provider, { code, state: params.get('state') ?? undefined }).then(
      (grant) => {
        if (grant.mode === 'bind') {
          // The browser that started the bind holds that user's session: keep it, with the bound provider.
          // Without one (it expired meanwhile), the session the server issued with the answer takes over.
          if (readSession().user?.id === grant.user.id) saveUser(grant.user);
          else saveSession(grant);
          // The cached profile learns the binding at once: the frame copies it to storage, and a stale copy
          // would undo the line above until the refetch lands.
          queryClient.setQueryData<SelfUser>(selfQueryKey, (old) => (old && old.id === grant.user.id ? { ...old, ...grant.user } : old));
          void queryClient.invalidateQueries({ queryKey: selfQueryKey });
          const name = nameNow.current;
          notify.success(t('oauth.boundTitle', { provider: name }), t('oauth.boundDescription', { provider: name }));
          navigate('/profile', { replace: true });
          return;
        }
        saveSession(grant);
        notify.success(t('success.title'), t('success.description'));
        navigate(takeProviderReturn(), { replace: true });
      },
      (error: unknown) => {
        if (isBindRefusal(error)) setBinding(true);
        setFailure({ reason: 'exchange', error });
      },
    );
  }, [params, provider, navigate, queryClient, t]);

  return (
    <div className="flex justify-center py-10">
      <Card className="w-full max-w-sm">
        <CardContent className="space-y-4 pt-5">
          {/* A failure waits until the provider can be named: GitHub and Google at once, an OpenID Connect provider when the status has come. */}
          {failure && providerName !== undefined ? (
            <>
              <ErrorAlert title={binding ? t('oauth.bindFailedTitle') : t('oauth.failedTitle')}>
                <FailureMessage failure={failure} name={providerName} binding={binding} />
              </ErrorAlert>
              <Button asChild className="w-full">
                {binding ? <Link to="/profile">{t('oauth.backToProfile')}</Link> : <Link to="/login">{t('oauth.backToLogin')}</Link>}
              </Button>
            </>
          ) : (
            <p role="status" className="flex items-center justify-center gap-2 py-6 text-slate-600 dark:text-slate-400">
              <Spinner className="size-5" />
              {binding && providerName !== undefined ? t('oauth.binding', { provider: providerName }) : t('oauth.processing')}
            </p>
          )}
        </CardContent>
      </Card>
    </div>
  );
}

export const GitHubReturnPage = () => <OAuthReturnPage provider="github" />;
export const GoogleReturnPage = () => <OAuthReturnPage provider="google" />;

/** /oauth/oidc/:slug, the redirect_uri of an OpenID Connect provider. */
export function OidcReturnPage() {
  const { slug = '' } = useParams();
  return <OAuthReturnPage provider={`oidc:${slug}`} />;
}
