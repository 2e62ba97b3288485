import type { OptionKey } from '@toolport/contract';
import type { TFunction } from 'i18next';
import { CircleCheck, CircleX } from 'lucide-react';
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { Spinner } from '../../components/ui/spinner';
import { failureText } from '../../lib/failure';
import { useSaveOptions } from './use-preferences';

/** Says a problem in the current language (called at each render, so a language switch re-translates it). */
type Problem = (t: TFunction<'preferences'>) => string;

/** What a Save makes of the typed text: the value to store, or the problem with it. */
export type TextOptionPlan = { ok: true; value: string } | { ok: false; problem: Problem };

/** The outcome of the last Save, kept as data so a language switch re-translates it. */
type Outcome = { ok: true } | { ok: false; problem: Problem } | { ok: false; error: unknown };

/** What the card's field gets: its id, value and the attributes that tie it to the hint and the outcome. */
export interface TextOptionFieldProps {
  id: string;
  value: string;
  onChange(value: string): void;
  'aria-invalid': true | undefined;
  'aria-describedby': string;
}

export interface TextOptionCardProps {
  option: OptionKey;
  saved: string;
  /** The section of the preferences namespace with title, description, label, hint, saved and saveFailed. */
  section: 'serverAddress' | 'origins';
  plan(text: string): TextOptionPlan;
  field(props: TextOptionFieldProps): ReactNode;
  /** The field and Save on one line (from the sm width up) rather than Save below the hint. */
  inline?: boolean;
}

function OutcomeText({ id, outcome, section }: { id: string; outcome: Outcome; section: TextOptionCardProps['section'] }) {
  const { t } = useTranslation('preferences');
  if (outcome.ok) {
    return (
      <p id={id} role="status" className="flex items-center gap-1.5 text-sm text-emerald-700 dark:text-emerald-400">
        <CircleCheck aria-hidden="true" className="size-4 shrink-0" />
        {t(`${section}.saved`)}
      </p>
    );
  }
  const reason = 'problem' in outcome ? outcome.problem(t) : failureText(outcome.error, t);
  return (
    <p id={id} role="alert" className="flex items-start gap-1.5 text-sm text-red-700 dark:text-red-400">
      <CircleX aria-hidden="true" className="mt-0.5 size-4 shrink-0" />
      {t(`${section}.saveFailed`, { reason })}
    </p>
  );
}

/**
 * A card with one text preference saved by its own button (docs/console.md §2.13): checked first, then saved;
 * the result shows below the field rather than as a toast (§8), and the field shows what was stored.
 */
export function TextOptionCard({ option, saved, section, plan, field, inline = false }: TextOptionCardProps) {
  const { t } = useTranslation(['preferences', 'common']);
  const id = useId();
  const [value, setValue] = useState(saved);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const save = useSaveOptions();

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const planned = plan(value);
    if (!planned.ok) return setOutcome(planned);
    setOutcome(null);
    save.mutate([{ key: option, value: planned.value }], {
      onSuccess: () => {
        setValue(planned.value);
        setOutcome({ ok: true });
      },
      onError: (error) => setOutcome({ ok: false, error }),
    });
  };

  const input = field({
    id: `${id}-field`,
    value,
    onChange: (next) => {
      setValue(next);
      setOutcome(null);
    },
    'aria-invalid': outcome && !outcome.ok ? true : undefined,
    'aria-describedby': `${id}-hint${outcome ? ` ${id}-outcome` : ''}`,
  });
  const submit = (
    <Button type="submit" disabled={save.isPending}>
      {save.isPending && <Spinner />}
      {t('common:actions.save')}
    </Button>
  );
  const hint = (
    <p id={`${id}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
      {t(`${section}.hint`)}
    </p>
  );

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <form onSubmit={onSubmit} aria-busy={save.isPending} noValidate>
        <CardHeader>
          <CardTitle id={`${id}-title`}>{t(`${section}.title`)}</CardTitle>
          <CardDescription>{t(`${section}.description`)}</CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          <Label htmlFor={`${id}-field`}>{t(`${section}.label`)}</Label>
          {inline ? (
            <>
              <div className="flex flex-col gap-2 sm:flex-row">
                {input}
                {submit}
              </div>
              {hint}
            </>
          ) : (
            <>
              {input}
              {hint}
              {submit}
            </>
          )}
          {outcome && <OutcomeText id={`${id}-outcome`} outcome={outcome} section={section} />}
        </CardContent>
      </form>
    </Card>
  );
}
