import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DialogForm } from '../../components/dialog-form';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { PasswordInput } from '../../components/ui/password-input';
import { firstBlankVar } from './env-vars';
import type { MarketEnvVar } from './market-item';

interface EnvVarDialogProps {
  /** Which package asks; the dialog is open while this is set. */
  name: string;
  vars: MarketEnvVar[];
  onSubmit(values: Record<string, string>): void;
  onCancel(): void;
}

function EnvVarField({ v, value, invalid, onChange }: { v: MarketEnvVar; value: string; invalid: boolean; onChange(value: string): void }) {
  const id = useId();
  const control = {
    id,
    value,
    autoComplete: 'off',
    spellCheck: false,
    'aria-invalid': invalid || undefined,
    'aria-describedby': v.description ? `${id}-description` : undefined,
    onChange: (e: { target: { value: string } }) => onChange(e.target.value),
  };
  return (
    <div className="space-y-1.5">
      <Label htmlFor={id} className="font-mono">
        {v.name}
      </Label>
      {v.isSecret ? <PasswordInput {...control} /> : <Input {...control} />}
      {v.description && (
        <p id={`${id}-description`} className="text-xs text-slate-600 dark:text-slate-400" data-i18n-data="">
          {v.description}
        </p>
      )}
    </div>
  );
}

/**
 * Asks for the environment variables an install is missing (docs/console.md §2.10, §5): every one must be
 * non-blank after trimming. Mounted per request, so it starts empty each time.
 */
export function EnvVarDialog({ name, vars, onSubmit, onCancel }: EnvVarDialogProps) {
  const { t } = useTranslation('market');
  const [values, setValues] = useState<Record<string, string>>({});
  const [blank, setBlank] = useState<string | null>(null);

  const submit = () => {
    const missing = firstBlankVar(
      vars.map((v) => v.name),
      values,
    );
    setBlank(missing);
    if (missing) return;
    onSubmit(Object.fromEntries(vars.map((v) => [v.name, values[v.name]?.trim() ?? ''])));
  };

  return (
    <Dialog open onOpenChange={(open) => !open && onCancel()}>
      <DialogContent className="max-w-lg">
        <DialogHeader>
          <DialogTitle>{t('envVarModal.title')}</DialogTitle>
          <DialogDescription>{t('envVarModal.description', { name })}</DialogDescription>
        </DialogHeader>
        <DialogForm onSubmit={submit} onCancel={onCancel} cancelLabel={t('envVarModal.cancel')} submitLabel={t('envVarModal.submit')}>
          {vars.map((v) => (
            <EnvVarField
              key={v.name}
              v={v}
              value={values[v.name] ?? ''}
              invalid={blank === v.name}
              onChange={(value) => {
                setValues((all) => ({ ...all, [v.name]: value }));
                if (blank === v.name) setBlank(null);
              }}
            />
          ))}
          {blank && (
            <p role="alert" className="text-sm font-medium text-red-600 dark:text-red-400">
              {t('envVarModal.errorRequired', { name: blank })}
            </p>
          )}
        </DialogForm>
      </DialogContent>
    </Dialog>
  );
}
