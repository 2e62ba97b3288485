import type { OptionKey } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { Switch } from '../../components/ui/switch';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { useSaveOptions } from './use-preferences';

type Key = ParseKeys<'preferences'>;

export interface SwitchOptionCardProps {
  /** The boolean preference ('true' / 'false') the switch saves as soon as it is flipped. */
  option: OptionKey;
  saved: boolean;
  text: { title: Key; description: Key; label: Key; hint: Key; turnedOn: Key; turnedOff: Key };
}

/**
 * A card with one switch for a boolean preference: saved at once, shown in its new position while the save
 * runs, a toast saying what changed (or why it failed, and the switch goes back).
 */
export function SwitchOptionCard({ option, saved, text }: SwitchOptionCardProps) {
  const { t } = useTranslation('preferences');
  const id = useId();
  const save = useSaveOptions();
  const pending = save.isPending ? save.variables?.[0]?.value : undefined;
  const checked = pending === undefined ? saved : pending === 'true';

  const toggle = (next: boolean) => {
    save.mutate([{ key: option, value: String(next) }], {
      onSuccess: () => notify.success(t('saved'), t(next ? text.turnedOn : text.turnedOff)),
      onError: (error) => notify.error(t('saveFailed'), failureText(error, t)),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <CardHeader>
        <CardTitle id={`${id}-title`}>{t(text.title)}</CardTitle>
        <CardDescription>{t(text.description)}</CardDescription>
      </CardHeader>
      <CardContent>
        <div className="flex items-start gap-3">
          <Switch
            id={`${id}-switch`}
            className="mt-0.5"
            checked={checked}
            disabled={save.isPending}
            aria-busy={save.isPending || undefined}
            aria-describedby={`${id}-hint`}
            onCheckedChange={toggle}
          />
          <div className="space-y-1">
            <Label htmlFor={`${id}-switch`}>{t(text.label)}</Label>
            <p id={`${id}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
              {t(text.hint)}
            </p>
          </div>
        </div>
      </CardContent>
    </Card>
  );
}
