import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { Switch } from '../../components/ui/switch';
import { failureText } from '../../lib/failure-text';
import { notify } from '../../lib/notify';
import { useSaveOptions } from './use-preferences';

/**
 * Whether remote (SSE and streamable HTTP) services, and the redirects they answer with, may point at
 * loopback, private and link-local addresses (AllowPrivateNetworkUpstreams, on by default). Saved as
 * soon as it is flipped; the server refuses such addresses at creation and at connect while it is off.
 */
export function RemoteServicesCard({ saved }: { saved: boolean }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const save = useSaveOptions();
  const pending = save.isPending ? save.variables?.[0]?.value : undefined;
  const checked = pending === undefined ? saved : pending === 'true';

  const toggle = (next: boolean) => {
    save.mutate([{ key: 'AllowPrivateNetworkUpstreams', value: String(next) }], {
      onSuccess: () => notify.success(t('saved'), t(next ? 'remote.allowed' : 'remote.refused')),
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <CardHeader>
        <CardTitle id={`${id}-title`}>{t('remote.title')}</CardTitle>
        <CardDescription>{t('remote.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <div className="flex items-start gap-3">
          <Switch
            id={`${id}-private`}
            className="mt-0.5"
            checked={checked}
            disabled={save.isPending}
            aria-busy={save.isPending || undefined}
            aria-describedby={`${id}-private-hint`}
            onCheckedChange={toggle}
          />
          <div className="space-y-1">
            <Label htmlFor={`${id}-private`}>{t('remote.allowPrivate')}</Label>
            <p id={`${id}-private-hint`} className="text-xs text-slate-600 dark:text-slate-400">
              {t('remote.allowPrivateHint')}
            </p>
          </div>
        </div>
      </CardContent>
    </Card>
  );
}
