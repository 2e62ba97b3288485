import type { StartupStrategy } from '@toolport/contract';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { RadioGroup, RadioGroupItem } from '../../components/ui/radio-group';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { isStartupStrategy, startupStrategies } from './preference-rules';
import { useSaveOptions } from './use-preferences';

/**
 * When the gateway starts stdio services (docs/console.md §2.13): `boot` or `demand`, saved as soon as it is
 * chosen. The gateway applies it at once: switching to `boot` starts every enabled stdio service.
 */
/** Whole minutes from 1 to 1440 (a day), as the server accepts for StdioIdleTimeoutMinutes. */
export const idleMinutesValid = (text: string): boolean => /^\d+$/.test(text.trim()) && Number(text) >= 1 && Number(text) <= 1440;

/**
 * How long a `demand`-started process may go without client calls before it stops (StdioIdleTimeoutMinutes).
 * Neither open sessions nor health checks count as calls.
 */
function IdleMinutesField({ saved }: { saved: string }) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const [value, setValue] = useState(saved);
  const [invalid, setInvalid] = useState(false);
  const save = useSaveOptions();
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!idleMinutesValid(value)) return setInvalid(true);
    setInvalid(false);
    save.mutate([{ key: 'StdioIdleTimeoutMinutes', value: String(Number(value)) }], {
      onSuccess: () => notify.success(t('saved'), t('startup.idle.saved', { count: Number(value) })),
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };
  return (
    <form onSubmit={onSubmit} noValidate aria-busy={save.isPending || undefined} className="mt-4 space-y-2 border-t pt-4">
      <Label htmlFor={`${id}-idle`}>{t('startup.idle.label')}</Label>
      <div className="flex items-center gap-2">
        <Input
          id={`${id}-idle`}
          inputMode="numeric"
          className="w-28"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          aria-invalid={invalid || undefined}
          aria-describedby={`${id}-idle-hint`}
        />
        <Button type="submit" variant="outline" size="sm" disabled={save.isPending}>
          {t('startup.idle.save')}
        </Button>
      </div>
      <p id={`${id}-idle-hint`} className={`text-xs ${invalid ? 'text-red-700 dark:text-red-400' : 'text-slate-600 dark:text-slate-400'}`}>
        {invalid ? t('startup.idle.invalid') : t('startup.idle.hint')}
      </p>
    </form>
  );
}

export function StartupStrategyCard({ saved, idleMinutes = '10' }: { saved: StartupStrategy; idleMinutes?: string }) {
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
        <IdleMinutesField saved={idleMinutes} />
      </CardContent>
    </Card>
  );
}
