import type { OAuthProvider } from '@toolport/contract';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { callbackUrl, providerKeys } from './preference-rules';

/**
 * What to enter at the provider when registering the OAuth app (docs/console.md §2.13): the homepage and the
 * callback URL {server}/oauth/{provider}. Without a saved server address the server uses the address the
 * browser reached it by, which is this console's.
 */
export function SetupHints({ provider, serverAddress }: { provider: OAuthProvider; serverAddress: string }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const server = serverAddress || window.location.origin;
  const rows = [
    { key: 'homepage', label: t('hints.homepage'), value: server },
    { key: 'callback', label: t('hints.callback'), value: callbackUrl(server, provider) },
  ];
  return (
    <section aria-labelledby={`${id}-title`} className="space-y-3 rounded-md bg-slate-50 p-3 dark:bg-slate-950/60">
      <h3 id={`${id}-title`} className="text-sm font-medium">
        {t('hints.title')}
      </h3>
      <p className="text-xs text-slate-600 dark:text-slate-400">{t(`hints.${provider}`, { provider: providerKeys[provider].label })}</p>
      {rows.map((row) => (
        <div key={row.key} className="space-y-1">
          <Label htmlFor={`${id}-${row.key}`} className="text-xs">
            {row.label}
          </Label>
          <Input
            id={`${id}-${row.key}`}
            readOnly
            value={row.value}
            className="font-mono text-xs"
            data-testid={`${provider}-${row.key}-url`}
            onFocus={(e) => e.currentTarget.select()}
          />
        </div>
      ))}
      {!serverAddress && <p className="text-xs text-amber-700 dark:text-amber-400">{t('hints.noServerAddress')}</p>}
    </section>
  );
}
