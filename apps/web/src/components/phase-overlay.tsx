import { CircleCheck } from 'lucide-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { cn } from '../lib/cn';
import type { SubmitPhase } from '../lib/use-submit-phases';
import { Spinner } from './ui/spinner';

const tickTone = { green: 'text-emerald-600', red: 'text-red-600' } as const;

/**
 * Covers a dialog or card while work runs: a spinner, or a tick (green, or red for a removal) once it is
 * done, with a label saying what is happening. Announced to screen readers as a status.
 */
export function StatusOverlay({
  icon,
  tick = 'green',
  label,
  className,
  ...data
}: {
  icon: 'spinner' | 'tick';
  tick?: keyof typeof tickTone;
  label: ReactNode;
  className?: string;
} & { [attribute: `data-${string}`]: string }) {
  return (
    <div
      role="status"
      {...data}
      className={cn(
        'absolute inset-0 z-10 flex flex-col items-center justify-center gap-2 rounded-lg bg-white/85 text-sm font-medium dark:bg-slate-900/85',
        className,
      )}
    >
      {icon === 'tick' ? <CircleCheck aria-hidden="true" className={cn('size-6', tickTone[tick])} /> : <Spinner className="size-6" />}
      {label}
    </div>
  );
}

/** Covers a dialog's form while it validates and submits (docs/console.md §2.7), saying which phase it is in. */
export function PhaseOverlay({ phase }: { phase: SubmitPhase }) {
  const { t } = useTranslation('common');
  if (phase === 'idle') return null;
  return <StatusOverlay data-phase={phase} icon={phase === 'validationSuccess' ? 'tick' : 'spinner'} label={t(`phases.${phase}`)} />;
}
