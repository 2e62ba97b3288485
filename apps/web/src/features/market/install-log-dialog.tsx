import { CircleAlert, CircleCheck } from 'lucide-react';
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Spinner } from '../../components/ui/spinner';
import type { InstallTask } from './use-install-tasks';

const titleKey = { installing: 'log.installing', success: 'log.complete', error: 'log.failed', idle: 'log.installing' } as const;

/**
 * The install's live log (docs/console.md §2.10): the task's lines in a 16rem panel that follows the newest
 * line, titled by the task's state. It cannot be closed while the install runs; then its button reads
 * Finish after a success, otherwise Close.
 */
export function InstallLogDialog({ name, task, open, onClose }: { name: string; task: InstallTask; open: boolean; onClose(): void }) {
  const { t } = useTranslation('market');
  const panel = useRef<HTMLDivElement>(null);
  const installing = task.status === 'installing' || task.status === 'idle';

  useEffect(() => {
    const el = panel.current;
    if (el && task.logs.length > 0) el.scrollTop = el.scrollHeight;
  }, [task.logs.length]);

  return (
    <Dialog open={open} onOpenChange={(next) => !next && !installing && onClose()}>
      <DialogContent
        className="max-w-2xl"
        // The footer button is the way out (Finish or Close); Escape works too once the install is over.
        hideClose
        locked={installing}
        onInteractOutside={(e) => e.preventDefault()}
      >
        <DialogHeader>
          <DialogTitle className="flex items-center gap-2">
            {installing && <Spinner className="size-5" />}
            {task.status === 'success' && <CircleCheck aria-hidden="true" className="size-5 text-emerald-600" />}
            {task.status === 'error' && <CircleAlert aria-hidden="true" className="size-5 text-red-600" />}
            {t(titleKey[task.status])}
          </DialogTitle>
          <DialogDescription>
            <span data-i18n-data="">{name}</span>
          </DialogDescription>
        </DialogHeader>
        <div
          ref={panel}
          role="log"
          aria-label={t('log.label')}
          aria-live="polite"
          data-testid="install-log"
          className="h-64 overflow-y-auto rounded-md border border-slate-200 bg-slate-950 p-3 font-mono text-xs leading-5 whitespace-pre-wrap break-all text-slate-100 dark:border-slate-800"
        >
          {task.logs.map((line, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: log lines only ever grow at the end and may repeat.
            <div key={i}>{line}</div>
          ))}
        </div>
        {task.status === 'error' && task.error && (
          <p role="alert" className="text-sm text-red-700 dark:text-red-400">
            {task.error}
          </p>
        )}
        <DialogFooter>
          <Button disabled={installing} onClick={onClose}>
            {task.status === 'success' ? t('log.finish') : t('log.close')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
