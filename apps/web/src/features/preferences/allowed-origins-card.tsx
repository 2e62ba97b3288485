import { CircleCheck, CircleX } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { Label } from '../../components/ui/label';
import { Spinner } from '../../components/ui/spinner';
import { Textarea } from '../../components/ui/textarea';
import { failureText } from '../../lib/failure-text';
import { planAllowedOrigins } from './preference-rules';
import { useSaveOptions } from './use-preferences';

type Outcome = { ok: true } | { ok: false; entry: string } | { ok: false; error: unknown };

/**
 * Browser-based MCP clients on other sites (AllowedOrigins): the origins whose pages may call the
 * gateway's MCP endpoints, one per line. The gateway answers their CORS preflights and refuses every
 * other origin with 403 (docs/security.md, "DNS rebinding and browser clients"). ALLOWED_ORIGINS adds
 * to this list from the environment.
 */
export function AllowedOriginsCard({ saved }: { saved: string }) {
  const { t } = useTranslation(['preferences', 'common']);
  const id = useId();
  const [value, setValue] = useState(saved);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const save = useSaveOptions();

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const plan = planAllowedOrigins(value);
    if (!plan.ok) return setOutcome({ ok: false, entry: plan.entry });
    setOutcome(null);
    save.mutate([{ key: 'AllowedOrigins', value: plan.value }], {
      onSuccess: () => {
        setValue(plan.value);
        setOutcome({ ok: true });
      },
      onError: (error) => setOutcome({ ok: false, error }),
    });
  };

  return (
    <Card role="region" aria-labelledby={`${id}-title`}>
      <form onSubmit={onSubmit} aria-busy={save.isPending} noValidate>
        <CardHeader>
          <CardTitle id={`${id}-title`}>{t('origins.title')}</CardTitle>
          <CardDescription>{t('origins.description')}</CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          <Label htmlFor={`${id}-origins`}>{t('origins.label')}</Label>
          <Textarea
            id={`${id}-origins`}
            rows={3}
            spellCheck={false}
            placeholder="https://app.example.com"
            value={value}
            aria-invalid={outcome && !outcome.ok ? true : undefined}
            aria-describedby={`${id}-hint${outcome ? ` ${id}-outcome` : ''}`}
            onChange={(e) => {
              setValue(e.target.value);
              setOutcome(null);
            }}
          />
          <p id={`${id}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
            {t('origins.hint')}
          </p>
          <Button type="submit" disabled={save.isPending}>
            {save.isPending && <Spinner />}
            {t('common:actions.save')}
          </Button>
          {outcome?.ok && (
            <p id={`${id}-outcome`} role="status" className="flex items-center gap-1.5 text-sm text-emerald-700 dark:text-emerald-400">
              <CircleCheck aria-hidden="true" className="size-4 shrink-0" />
              {t('origins.saved')}
            </p>
          )}
          {outcome && !outcome.ok && (
            <p id={`${id}-outcome`} role="alert" className="flex items-start gap-1.5 text-sm text-red-700 dark:text-red-400">
              <CircleX aria-hidden="true" className="mt-0.5 size-4 shrink-0" />
              {t('origins.saveFailed', {
                reason: 'entry' in outcome ? t('origins.notAnOrigin', { entry: outcome.entry }) : failureText(outcome.error, t),
              })}
            </p>
          )}
        </CardContent>
      </form>
    </Card>
  );
}
