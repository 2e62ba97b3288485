import { useMutation, useQuery } from '@tanstack/react-query';
import { type ConsentRequest, routes } from '@toolport/contract';
import type { TFunction } from 'i18next';
import { PlugZap } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { ErrorAlert } from '../../components/ui/alert';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardFooter, CardHeader } from '../../components/ui/card';
import { Skeleton } from '../../components/ui/skeleton';
import { Spinner } from '../../components/ui/spinner';
import { call } from '../../lib/api';
import { failureText } from '../../lib/failure';
import { leaveTo } from '../../lib/leave';
import { useSession } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';

/** What the user is asked to approve, in words: every endpoint, or one service or group. */
function endpointText(endpoint: ConsentRequest['endpoint'], t: TFunction<'auth'>): string {
  if (endpoint.kind === 'all') return t('consent.allEndpoints');
  return t(endpoint.kind === 'group' ? 'consent.groupEndpoint' : 'consent.serviceEndpoint', { name: endpoint.name });
}

function EndpointText({ endpoint }: { endpoint: ConsentRequest['endpoint'] }) {
  const { t } = useTranslation('auth');
  return <>{endpointText(endpoint, t)}</>;
}

/** Why Allow is not offered: the endpoint is gone, or its access list does not include the user (decision 0040). */
function RefusalText({ request }: { request: ConsentRequest }) {
  const { t } = useTranslation('auth');
  const { endpoint, refusal } = request;
  if (endpoint.kind === 'all' || !refusal) return <>{t('consent.notAllowed')}</>;
  if (refusal === 'unknown_endpoint') return <>{t('consent.notAllowedUnknown', { endpoint: endpointText(endpoint, t) })}</>;
  return <>{t(endpoint.kind === 'group' ? 'consent.notAllowedGroup' : 'consent.notAllowedService', { name: endpoint.name })}</>;
}

/**
 * /oauth/consent?request=…: an MCP client asks to act for the signed-in user (Toolport as its OAuth
 * server, docs/console.md). Shows who asks (name, logo, the host the browser goes back to) and for which
 * endpoint, and sends the browser back to the client with Allow's code or Deny's refusal.
 */
export function ConsentPage() {
  const { t } = useTranslation(['auth', 'common']);
  const [params] = useSearchParams();
  const id = params.get('request') ?? '';
  const { user } = useSession();

  const request = useQuery({
    queryKey: ['oauth-consent', id],
    queryFn: () => call(routes.oauthServer.consent, { params: { id }, notify: false }),
    enabled: id !== '',
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const decide = useMutation({
    mutationFn: (allow: boolean) => call(routes.oauthServer.decide, { params: { id }, body: { allow }, notify: false }),
    onSuccess: (outcome) => leaveTo(outcome.redirect_to),
  });

  const data = request.data;
  const busy = decide.isPending || decide.isSuccess;
  // Its own tab title, not the sign-in page's it may have come through (issue 29).
  useDocumentTitle(t('consent.documentTitle'));
  return (
    <div className="flex justify-center py-4 sm:py-10">
      <Card className="w-full max-w-md">
        <CardHeader className="items-center gap-3 text-center">
          {data?.logo_uri ? (
            <img src={data.logo_uri} alt="" className="size-12 rounded-lg object-contain" referrerPolicy="no-referrer" />
          ) : (
            <PlugZap aria-hidden="true" className="size-10 text-slate-500" />
          )}
          <h1 className="text-xl font-semibold">{data ? t('consent.title', { client: data.client_name }) : t('consent.titlePending')}</h1>
        </CardHeader>
        <CardContent className="space-y-4">
          {id === '' && <ErrorAlert title={t('consent.failed')}>{t('consent.missingRequest')}</ErrorAlert>}
          {request.isPending && id !== '' && (
            <div aria-hidden="true" className="space-y-2">
              <Skeleton className="h-4 w-full" />
              <Skeleton className="h-4 w-2/3" />
            </div>
          )}
          {request.isError && <ErrorAlert title={t('consent.failed')}>{failureText(request.error, t)}</ErrorAlert>}
          {data && (
            <>
              <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
                <dt className="text-slate-600 dark:text-slate-400">{t('consent.account')}</dt>
                <dd className="font-medium">{user?.username}</dd>
                <dt className="text-slate-600 dark:text-slate-400">{t('consent.endpoint')}</dt>
                <dd className="font-medium">
                  <EndpointText endpoint={data.endpoint} />
                </dd>
                <dt className="text-slate-600 dark:text-slate-400">{t('consent.returnsTo')}</dt>
                <dd className="break-all font-mono">{data.redirect_host}</dd>
              </dl>
              <p className="text-sm text-slate-600 dark:text-slate-400">{t('consent.explanation')}</p>
              {!data.allowed && (
                <ErrorAlert title={t('consent.notAllowedTitle')}>
                  <RefusalText request={data} />
                </ErrorAlert>
              )}
              {decide.isError && <ErrorAlert title={t('consent.failed')}>{failureText(decide.error, t)}</ErrorAlert>}
            </>
          )}
        </CardContent>
        {data && (
          <CardFooter className="justify-end gap-2">
            <Button variant="outline" disabled={busy} onClick={() => decide.mutate(false)}>
              {decide.isPending && decide.variables === false && <Spinner />}
              {t('consent.deny')}
            </Button>
            <Button disabled={busy || !data.allowed} onClick={() => decide.mutate(true)}>
              {decide.isPending && decide.variables === true && <Spinner />}
              {t('consent.allow')}
            </Button>
          </CardFooter>
        )}
      </Card>
    </div>
  );
}
