import type { OAuthProvider } from '@toolport/contract';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { GitHubMark, GoogleMark } from '../../components/icons/brand-icons';
import { Badge } from '../../components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { Switch } from '../../components/ui/switch';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { CredentialsForm } from './credentials-form';
import { type Preferences, type ProviderReadiness, providerKeys, providerReadiness } from './preference-rules';
import { SetupHints } from './setup-hints';
import { useSaveOptions } from './use-preferences';

const marks = { github: GitHubMark, google: GoogleMark } as const;
const readinessTone = { off: 'neutral', active: 'success', incomplete: 'warning' } as const satisfies Record<ProviderReadiness, string>;

/**
 * One sign-in provider (docs/console.md §2.13): its switch, saved as soon as it is flipped (switching on needs a
 * saved client ID, as on the server), its client ID and secret, and what to register at the provider.
 */
export function ProviderCard({ provider, prefs }: { provider: OAuthProvider; prefs: Preferences }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const keys = providerKeys[provider];
  const label = keys.label;
  const Mark = marks[provider];
  const save = useSaveOptions();
  const saved = prefs[keys.enabled] === 'true';
  const pending = save.isPending ? save.variables?.[0]?.value : undefined;
  const checked = pending === undefined ? saved : pending === 'true';
  const readiness = providerReadiness(prefs, provider);

  const toggle = (next: boolean) => {
    if (next && !prefs[keys.clientId]) {
      notify.error(t('saveFailed'), t('providers.clientIdRequired', { provider: label }));
      return;
    }
    save.mutate([{ key: keys.enabled, value: String(next) }], {
      onSuccess: () => notify.success(t(next ? 'providers.enabled' : 'providers.disabled', { provider: label })),
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <CardHeader>
        <CardTitle id={`${id}-title`} className="flex items-center gap-2">
          <Mark className="size-4" />
          {t('providers.title', { provider: label })}
        </CardTitle>
        <CardDescription>{t(`providers.${provider}Description`)}</CardDescription>
      </CardHeader>
      <CardContent className="space-y-5">
        <div className="flex flex-wrap items-center justify-between gap-3">
          <div className="flex items-center gap-3">
            <Switch
              id={`${id}-enabled`}
              checked={checked}
              disabled={save.isPending}
              aria-busy={save.isPending || undefined}
              aria-describedby={`${id}-readiness`}
              onCheckedChange={toggle}
            />
            <Label htmlFor={`${id}-enabled`}>{t('providers.enable', { provider: label })}</Label>
          </div>
          <Badge id={`${id}-readiness`} tone={readinessTone[readiness]} data-testid={`${provider}-readiness`}>
            {t(`providers.readiness.${readiness}`)}
          </Badge>
        </div>
        {readiness === 'incomplete' && <p className="text-xs text-amber-700 dark:text-amber-400">{t('providers.incompleteHint')}</p>}
        <CredentialsForm provider={provider} prefs={prefs} />
        <SetupHints provider={provider} serverAddress={prefs.ServerAddress ?? ''} />
      </CardContent>
    </Card>
  );
}
