import { type OAuthProvider, type OidcPublicProvider, pathOf, routes } from '@toolport/contract';
import { KeyRound } from 'lucide-react';
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

/** An OpenID Connect provider's sign-in (decision 0048): the same start, by slug. */
export const oidcAuthorizeUrl = (slug: string) => `/api${pathOf(routes.oauth.oidcAuthorize, { slug })}?redirect=1`;

/** A company provider the server lists as enabled: its label and icon, or a key when it has none. */
function OidcButton({ provider }: { provider: OidcPublicProvider }) {
  const { t } = useTranslation('auth');
  const location = useLocation();
  const onClick = () => {
    rememberProviderReturn(location.state);
    leaveTo(oidcAuthorizeUrl(provider.slug));
  };
  return (
    <Button variant="outline" className="w-full" onClick={onClick}>
      {provider.icon ? <img src={provider.icon} alt="" className="size-4" /> : <KeyRound aria-hidden className="size-4" />}
      {t('providers.oidc', { provider: provider.label })}
    </Button>
  );
}

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
      {status?.oidc_providers.map((provider) => (
        <OidcButton key={provider.slug} provider={provider} />
      ))}
      {providers.map((provider) => (
        <ProviderButton key={provider.id} provider={provider} enabled={providerEnabled(status, provider.id)} />
      ))}
    </div>
  );
}
