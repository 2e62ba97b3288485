import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { LazyDialogProps } from '../components/lazy-dialog-button';
import { Button } from '../components/ui/button';
import { Dialog, DialogClose, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '../components/ui/dialog';
import { Input } from '../components/ui/input';
import { Label } from '../components/ui/label';
import { notify } from '../lib/notify';

/** Made-up values: this dialog only shows what a configuration looks like. */
const SAMPLE_API_KEY = 'tp_sample_0123456789abcdef';
const SAMPLE_ENDPOINT = 'https://gateway.example.com/proxy/sample/mcp';

/** The static sample of docs/console.md §2.2: fake key and endpoint; Save only shows a toast. */
export default function SampleConfigDialog({ onClose, onCloseAutoFocus }: LazyDialogProps) {
  const { t } = useTranslation();
  const id = useId();
  const save = () => {
    notify.success(t('sampleConfig.saved'), t('sampleConfig.savedDescription'));
    onClose();
  };
  return (
    <Dialog open onOpenChange={(open) => !open && onClose()}>
      <DialogContent onCloseAutoFocus={onCloseAutoFocus}>
        <DialogHeader>
          <DialogTitle>{t('sampleConfig.title')}</DialogTitle>
          <DialogDescription>{t('sampleConfig.description')}</DialogDescription>
        </DialogHeader>
        <div className="space-y-4">
          <div className="space-y-2">
            <Label htmlFor={`${id}-key`}>{t('sampleConfig.apiKey')}</Label>
            <Input id={`${id}-key`} readOnly value={SAMPLE_API_KEY} className="font-mono" />
          </div>
          <div className="space-y-2">
            <Label htmlFor={`${id}-endpoint`}>{t('sampleConfig.endpoint')}</Label>
            <Input id={`${id}-endpoint`} readOnly value={SAMPLE_ENDPOINT} className="font-mono" />
          </div>
        </div>
        <DialogFooter>
          <DialogClose asChild>
            <Button variant="outline">{t('actions.cancel')}</Button>
          </DialogClose>
          <Button onClick={save}>{t('actions.save')}</Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
