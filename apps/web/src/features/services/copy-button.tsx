import { Check, Copy } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';

/**
 * A copy button that reads 'Copied' for a moment after it worked. Its accessible name also says what it
 * copies ('Copy: endpoint URL'), as a dialog has several.
 */
export function CopyButton({ copied, label, onCopy }: { copied: boolean; label: string; onCopy(): void }) {
  const { t } = useTranslation('services');
  return (
    <Button variant="outline" size="sm" onClick={onCopy} className="min-w-24" data-copied={copied || undefined}>
      {copied ? <Check aria-hidden="true" className="text-emerald-600" /> : <Copy aria-hidden="true" />}
      <span>{copied ? t('copy.copied') : t('copy.copy')}</span>
      <span className="sr-only">
        {t('copy.separator')}
        {label}
      </span>
    </Button>
  );
}
