import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type InstalledService, type OAuthMode, routes } from '@toolport/contract';
import { Plug } from 'lucide-react';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Label } from '../../components/ui/label';
import { RadioGroup, RadioGroupItem } from '../../components/ui/radio-group';
import { call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { refreshServices } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { integerIdOf } from '../../lib/service-ids';

const oauthStateKey = (id: number) => ['upstream-oauth', id] as const;

/**
 * Connect: asks the server for the provider's authorize URL and goes there; the provider sends the browser back
 * through the server (which checks the service again) to /oauth/upstream. One flow for the Configure dialog's
 * section and the card's button (docs/console.md §2.5, §2.6).
 */
export function useOAuthConnect(rawServiceId: number) {
  const { t } = useTranslation('services');
  const [connecting, setConnecting] = useState(false);
  const connect = async () => {
    setConnecting(true);
    try {
      const id = integerIdOf(rawServiceId);
      const { authorize_url } = await call(routes.upstreamOAuth.connect, { params: { id }, notify: false });
      notify.success(t('oauth.connecting'));
      window.location.assign(authorize_url);
    } catch (err) {
      showFailure(err, t, { failed: t('oauth.failed'), error: t('oauth.failed'), fallback: t('errors.unknown') });
      setConnecting(false);
    }
  };
  return { connect, connecting };
}

/** The Connect button on a card or row whose service needs authorization (issue 29). */
export function ConnectButton({
  service,
  name,
  disabled = false,
}: {
  service: Pick<InstalledService, 'id'>;
  name: string;
  disabled?: boolean;
}) {
  const { t } = useTranslation('services');
  const { connect, connecting } = useOAuthConnect(service.id);
  return (
    <Button
      type="button"
      size="sm"
      className="h-7 shrink-0 px-2"
      aria-label={t('oauth.connectService', { name })}
      disabled={disabled || connecting}
      onClick={() => void connect()}
    >
      <Plug aria-hidden="true" />
      {t('oauth.connect')}
    </Button>
  );
}

/**
 * The OAuth connection of a remote service (issue 19): its state as the caller sees it (per user in
 * per-user mode), Connect / Reconnect / Disconnect, and for admins the mode. Connect leaves for the
 * provider's authorize page; the provider sends the browser back to /oauth/upstream. No token is shown.
 */
export function OAuthSection({ service, admin }: { service: InstalledService; admin: boolean }) {
  const { t, i18n } = useTranslation('services');
  const id = useId();
  const queryClient = useQueryClient();
  const serviceId = integerIdOf(service.id);
  const state = useQuery({
    queryKey: oauthStateKey(serviceId),
    queryFn: () => call(routes.upstreamOAuth.state, { params: { id: serviceId }, notify: false }),
  });
  const [working, setBusy] = useState(false);
  const { connect, connecting } = useOAuthConnect(service.id);
  const busy = working || connecting;
  const data = state.data;
  if (service.type === 'stdio' || !data) return null;
  // Nothing to show a non-admin until the service is known to need OAuth.
  if (!admin && data.oauth_mode === null) return null;
  const mode: OAuthMode = data.oauth_mode ?? 'shared';
  const mayConnect = admin || mode === 'per_user';
  const connected = data.oauth_status === 'connected';
  const fail = (err: unknown) =>
    showFailure(err, t, { failed: t('oauth.failed'), error: t('oauth.failed'), fallback: t('errors.unknown') });
  const reload = async () => {
    await queryClient.invalidateQueries({ queryKey: oauthStateKey(serviceId) });
    await refreshServices(queryClient);
  };

  const disconnect = async () => {
    setBusy(true);
    try {
      await call(routes.upstreamOAuth.disconnect, { params: { id: serviceId }, notify: false });
      notify.success(t('oauth.disconnected'));
      await reload();
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  };
  const setMode = async (next: OAuthMode) => {
    setBusy(true);
    try {
      await call(routes.upstreamOAuth.update, { params: { id: serviceId }, body: { oauth_mode: next }, notify: false });
      notify.success(t('oauth.modeSaved'));
      await reload();
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section
      aria-labelledby={`${id}-title`}
      data-testid="oauth-section"
      className="space-y-3 border-t border-slate-200 pt-4 dark:border-slate-800"
    >
      <h3 id={`${id}-title`} className="text-sm font-medium">
        {t('oauth.title')}
      </h3>
      <p className="text-sm text-slate-600 dark:text-slate-400">{t('oauth.intro')}</p>
      <p data-testid="oauth-status" className="text-sm font-medium">
        {t(`oauth.status.${data.oauth_status}`)}
        {connected && data.connected_as ? ` · ${t('oauth.connectedAs', { name: data.connected_as })}` : ''}
      </p>
      {connected && data.expires_at !== null && (
        <p className="text-xs text-slate-600 dark:text-slate-400">
          {t('oauth.expires', { when: new Date(data.expires_at).toLocaleString(i18n.language) })}
        </p>
      )}
      {admin && (
        <fieldset className="space-y-2">
          <legend className="text-sm">{t('oauth.modeLabel')}</legend>
          <RadioGroup value={mode} onValueChange={(v) => void setMode(v as OAuthMode)} disabled={busy}>
            {(['shared', 'per_user'] as const).map((m) => (
              <div key={m} className="flex items-center gap-2">
                <RadioGroupItem id={`${id}-${m}`} value={m} />
                <Label htmlFor={`${id}-${m}`} className="font-normal">
                  {t(`oauth.mode.${m}`)}
                </Label>
              </div>
            ))}
          </RadioGroup>
        </fieldset>
      )}
      {!admin && (
        <p className="text-xs text-slate-600 dark:text-slate-400">{t(mode === 'shared' ? 'oauth.sharedHint' : 'oauth.perUserHint')}</p>
      )}
      {mayConnect && (
        <div className="flex flex-wrap gap-2">
          <Button type="button" disabled={busy} onClick={() => void connect()}>
            {connected ? t('oauth.reconnect') : t('oauth.connect')}
          </Button>
          {connected && (
            <Button type="button" variant="outline" disabled={busy} onClick={() => void disconnect()}>
              {t('oauth.disconnect')}
            </Button>
          )}
        </div>
      )}
    </section>
  );
}
