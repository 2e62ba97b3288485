import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { Switch } from '../../components/ui/switch';
import { failureText } from '../../lib/failure-text';
import { notify } from '../../lib/notify';
import { useSaveOptions } from './use-preferences';

/**
 * MCP clients signing in with OAuth: whether unknown clients may register themselves (dynamic client
 * registration, OAuthClientRegistrationEnabled, on by default). Clients known by a Client ID Metadata
 * Document need no registration and keep working when it is off.
 */
export function McpClientSignInCard({ saved }: { saved: boolean }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const save = useSaveOptions();
  const pending = save.isPending ? save.variables?.[0]?.value : undefined;
  const checked = pending === undefined ? saved : pending === 'true';

  const toggle = (next: boolean) => {
    save.mutate([{ key: 'OAuthClientRegistrationEnabled', value: String(next) }], {
      onSuccess: () => notify.success(t('saved'), t(next ? 'mcpClients.registrationOn' : 'mcpClients.registrationOff')),
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <CardHeader>
        <CardTitle id={`${id}-title`}>{t('mcpClients.title')}</CardTitle>
        <CardDescription>{t('mcpClients.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <div className="flex items-start gap-3">
          <Switch
            id={`${id}-registration`}
            className="mt-0.5"
            checked={checked}
            disabled={save.isPending}
            aria-busy={save.isPending || undefined}
            aria-describedby={`${id}-registration-hint`}
            onCheckedChange={toggle}
          />
          <div className="space-y-1">
            <Label htmlFor={`${id}-registration`}>{t('mcpClients.registration')}</Label>
            <p id={`${id}-registration-hint`} className="text-xs text-slate-600 dark:text-slate-400">
              {t('mcpClients.registrationHint')}
            </p>
          </div>
        </div>
      </CardContent>
    </Card>
  );
}
