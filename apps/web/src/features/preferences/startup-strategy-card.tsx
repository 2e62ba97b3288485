import type { StartupStrategy } from '@toolport/contract';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { RadioGroup, RadioGroupItem } from '../../components/ui/radio-group';
import { failureText } from '../../lib/failure-text';
import { notify } from '../../lib/notify';
import { isStartupStrategy, startupStrategies } from './preference-rules';
import { useSaveOptions } from './use-preferences';

/**
 * When the gateway starts stdio services (console spec §2.13): `boot` or `demand`, saved as soon as it is
 * chosen. The gateway applies it at once: switching to `boot` starts every enabled stdio service.
 */
export function StartupStrategyCard({ saved }: { saved: StartupStrategy }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const save = useSaveOptions();
  const pending = save.isPending ? save.variables?.[0]?.value : undefined;
  const shown = isStartupStrategy(pending) ? pending : saved;

  const choose = (value: string) => {
    if (!isStartupStrategy(value) || value === saved) return;
    save.mutate([{ key: 'StdioServiceStartupStrategy', value }], {
      onSuccess: () => notify.success(t('saved'), t(`startup.applied.${value}`)),
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <CardHeader>
        <CardTitle id={`${id}-title`}>{t('startup.title')}</CardTitle>
        <CardDescription>{t('startup.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <RadioGroup
          aria-labelledby={`${id}-title`}
          aria-busy={save.isPending || undefined}
          value={shown}
          onValueChange={choose}
          disabled={save.isPending}
          className="flex-col gap-3"
        >
          {startupStrategies.map((strategy) => (
            <div key={strategy} className="flex items-start gap-3">
              <RadioGroupItem id={`${id}-${strategy}`} value={strategy} className="mt-0.5" aria-describedby={`${id}-${strategy}-hint`} />
              <div className="space-y-1">
                <Label htmlFor={`${id}-${strategy}`}>{t(`startup.${strategy}.label`)}</Label>
                <p id={`${id}-${strategy}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
                  {t(`startup.${strategy}.description`)}
                </p>
              </div>
            </div>
          ))}
        </RadioGroup>
      </CardContent>
    </Card>
  );
}
