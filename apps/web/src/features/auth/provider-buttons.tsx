import { type OAuthProvider, pathOf, routes } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { useLocation } from 'react-router';
import { rememberProviderReturn } from '../../app/return-to';
import { GitHubMark, GoogleMark } from '../../components/icons/brand-icons';
import { Button } from '../../components/ui/button';
import { Tooltip } from '../../components/ui/tooltip';
import { leaveTo } from '../../lib/leave';
import { notify } from '../../lib/notify';
import { providerEnabled } from '../../lib/oauth-providers';
import { useServerStatus } from '../../lib/server-status';

const providers: { id: OAuthProvider; name: string; Mark: typeof GitHubMark }[] = [
  { id: 'github', name: 'GitHub', Mark: GitHubMark },
  { id: 'google', name: 'Google', Mark: GoogleMark },
];

/** The server starts the provider's sign-in (state, PKCE) and sends the browser on to it. */
export const authorizeUrl = (provider: OAuthProvider) => `/api${pathOf(routes.oauth.authorize[provider])}?redirect=1`;

function ProviderButton({ provider, enabled }: { provider: (typeof providers)[number]; enabled: boolean }) {
  const { t } = useTranslation('auth');
  const { id, name, Mark } = provider;
  const location = useLocation();

  // Not `disabled`: an aria-disabled button stays focusable, so keyboard users reach the tooltip too.
  const onClick = () => {
    if (enabled) {
      rememberProviderReturn(location.state);
      leaveTo(authorizeUrl(id));
    } else notify.error(t('providers.notConfiguredTitle', { provider: name }), t('providers.contactAdmin'));
  };
  const button = (
    <Button variant="outline" className="w-full" aria-disabled={!enabled || undefined} onClick={onClick}>
      <Mark className="size-4" />
      {t(`providers.${id}`)}
    </Button>
  );
  return <Tooltip content={enabled ? null : t('providers.notConfigured', { provider: name })}>{button}</Tooltip>;
}

export function ProviderButtons() {
  const { data: status } = useServerStatus();
  return (
    <div className="grid gap-2">
      {providers.map((provider) => (
        <ProviderButton key={provider.id} provider={provider} enabled={providerEnabled(status, provider.id)} />
      ))}
    </div>
  );
}
