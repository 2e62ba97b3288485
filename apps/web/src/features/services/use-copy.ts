import type { ParseKeys } from 'i18next';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { copyText } from '../../lib/clipboard';
import { notify } from '../../lib/notify';

/** How long a copy button says 'Copied' (docs/console.md §9). */
export const COPY_FEEDBACK_MS = 1_200;

/**
 * Copies and tells the user: a success toast with `successKey`, the button's 'copied' state for 1.2 s,
 * or a failure toast with the reason. `copiedId` says which of several buttons was pressed last.
 */
export function useCopy() {
  const { t } = useTranslation('services');
  const [copiedId, setCopiedId] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  useEffect(() => () => clearTimeout(timer.current), []);

  const copy = useCallback(
    async (id: string, text: string, successKey: ParseKeys<'services'>) => {
      const result = await copyText(text);
      if (!result.ok) {
        notify.error(t('copy.failed'), t(`copy.reasons.${result.reason}`));
        return;
      }
      notify.success(t(successKey));
      setCopiedId(id);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => setCopiedId(null), COPY_FEEDBACK_MS);
    },
    [t],
  );

  return { copy, copiedId };
}
