import type { ParseKeys } from 'i18next';
import { CircleCheck, CircleX } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { Spinner } from '../../components/ui/spinner';
import { failureText } from '../../lib/failure-text';
import { normaliseServerAddress, serverAddressProblem } from './preference-rules';
import { useSaveOptions } from './use-preferences';

/** The outcome of the last Save, kept as data so a language switch re-translates it. */
type Outcome = { ok: true } | { ok: false; problem: ParseKeys<'preferences'> } | { ok: false; error: unknown };

function OutcomeText({ id, outcome }: { id: string; outcome: Outcome }) {
  const { t } = useTranslation('preferences');
  if (outcome.ok) {
    return (
      <p id={id} role="status" className="flex items-center gap-1.5 text-sm text-emerald-700 dark:text-emerald-400">
        <CircleCheck aria-hidden="true" className="size-4 shrink-0" />
        {t('serverAddress.saved')}
      </p>
    );
  }
  const reason = 'problem' in outcome ? t(outcome.problem) : failureText(outcome.error, t);
  return (
    <p id={id} role="alert" className="flex items-start gap-1.5 text-sm text-red-700 dark:text-red-400">
      <CircleX aria-hidden="true" className="mt-0.5 size-4 shrink-0" />
      {t('serverAddress.saveFailed', { reason })}
    </p>
  );
}

/**
 * The address users and providers reach the console at (docs/console.md §2.13), saved with its own button; the
 * result shows below the field rather than as a toast (§8). Saved without its trailing slash (§9).
 */
export function ServerAddressCard({ saved }: { saved: string }) {
  const { t } = useTranslation(['preferences', 'common']);
  const id = useId();
  const [value, setValue] = useState(saved);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const save = useSaveOptions();

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const address = normaliseServerAddress(value);
    const problem = serverAddressProblem(address);
    if (problem) return setOutcome({ ok: false, problem });
    setOutcome(null);
    save.mutate([{ key: 'ServerAddress', value: address }], {
      onSuccess: () => {
        setValue(address);
        setOutcome({ ok: true });
      },
      onError: (error) => setOutcome({ ok: false, error }),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <form onSubmit={onSubmit} aria-busy={save.isPending} noValidate>
        <CardHeader>
          <CardTitle id={`${id}-title`}>{t('serverAddress.title')}</CardTitle>
          <CardDescription>{t('serverAddress.description')}</CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          <Label htmlFor={`${id}-address`}>{t('serverAddress.label')}</Label>
          <div className="flex flex-col gap-2 sm:flex-row">
            <Input
              id={`${id}-address`}
              type="url"
              inputMode="url"
              autoComplete="url"
              placeholder="https://gateway.example.com"
              value={value}
              aria-invalid={outcome && !outcome.ok ? true : undefined}
              aria-describedby={`${id}-hint${outcome ? ` ${id}-outcome` : ''}`}
              onChange={(e) => {
                setValue(e.target.value);
                setOutcome(null);
              }}
            />
            <Button type="submit" disabled={save.isPending}>
              {save.isPending && <Spinner />}
              {t('common:actions.save')}
            </Button>
          </div>
          <p id={`${id}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
            {t('serverAddress.hint')}
          </p>
          {outcome && <OutcomeText id={`${id}-outcome`} outcome={outcome} />}
        </CardContent>
      </form>
    </Card>
  );
}
