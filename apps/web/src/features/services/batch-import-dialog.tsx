import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from '../../components/ui/alert';
import { Button } from '../../components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Label } from '../../components/ui/label';
import { Spinner } from '../../components/ui/spinner';
import { Textarea } from '../../components/ui/textarea';
import { useResetAfterClose } from '../../lib/use-submit-phases';
import { canImport } from './batch-import';
import { BatchItemList, BatchReportCounts } from './batch-report';
import { useBatchImport } from './use-batch-import';

/** Batch Import (docs/console.md §2.9): JSON in, live progress from the event stream, then a report. */
export default function BatchImportDialog({ open, onOpenChange }: { open: boolean; onOpenChange(open: boolean): void }) {
  const { t } = useTranslation('services');
  const id = useId();
  const [text, setText] = useState('');
  const batch = useBatchImport();

  useResetAfterClose(open, () => {
    setText('');
    batch.reset();
  });

  return (
    <Dialog open={open} onOpenChange={(next) => (batch.running && !next ? undefined : onOpenChange(next))}>
      <DialogContent className="max-w-2xl" locked={batch.running}>
        <DialogHeader>
          <DialogTitle>{t('batch.title')}</DialogTitle>
          <DialogDescription>{t('batch.description')}</DialogDescription>
        </DialogHeader>

        {batch.phase === 'input' && (
          <form
            className="space-y-3"
            onSubmit={(e) => {
              e.preventDefault();
              if (canImport(text, batch.running)) void batch.start(text);
            }}
          >
            {batch.alert && <ErrorAlert title={t(batch.alert.key)}>{batch.alert.detail}</ErrorAlert>}
            <div className="space-y-1.5">
              <Label htmlFor={`${id}-json`}>{t('batch.label')}</Label>
              <Textarea
                id={`${id}-json`}
                value={text}
                placeholder={t('batch.placeholder')}
                className="min-h-56 font-mono text-xs"
                spellCheck={false}
                onChange={(e) => setText(e.target.value)}
              />
            </div>
            <DialogFooter>
              <Button variant="outline" onClick={() => onOpenChange(false)}>
                {t('batch.close')}
              </Button>
              <Button type="submit" disabled={!canImport(text, batch.running)}>
                {t('batch.import')}
              </Button>
            </DialogFooter>
          </form>
        )}

        {batch.phase === 'progress' && (
          <div className="space-y-3" aria-busy="true">
            <p role="status" className="flex items-center gap-2 text-sm font-medium">
              <Spinner />
              {t('batch.progress')}
            </p>
            {batch.items.length === 0 ? (
              <p className="text-sm text-slate-600 dark:text-slate-400">{t('batch.waiting')}</p>
            ) : (
              <BatchItemList items={batch.items} />
            )}
            <DialogFooter>
              <Button disabled>{t('batch.importing')}</Button>
            </DialogFooter>
          </div>
        )}

        {batch.phase === 'report' && (
          <div className="space-y-4">
            <h3 className="text-sm font-medium">{t('batch.report')}</h3>
            <BatchReportCounts summary={batch.summary} />
            <BatchItemList items={batch.items} />
            <DialogFooter>
              <Button
                variant="outline"
                onClick={() => {
                  setText('');
                  batch.reset();
                }}
              >
                {t('batch.again')}
              </Button>
              <Button onClick={() => onOpenChange(false)}>{t('batch.close')}</Button>
            </DialogFooter>
          </div>
        )}
      </DialogContent>
    </Dialog>
  );
}
