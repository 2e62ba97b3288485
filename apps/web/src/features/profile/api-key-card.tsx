import { useMutation, useQueryClient } from '@tanstack/react-query';
import { routes, type SelfUser } from '@toolport/contract';
import { Copy, Eye, EyeOff, RefreshCw } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../components/ui/alert-dialog';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from '../../components/ui/card';
import { Spinner } from '../../components/ui/spinner';
import { call } from '../../lib/api';
import { copyText } from '../../lib/clipboard';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { selfQueryKey } from '../../lib/self';
import { maskApiKey } from './api-key-mask';

const NOTES = ['apiKey.notes.usage', 'apiKey.notes.secret', 'apiKey.notes.refresh'] as const;

/** The user's API key, masked unless shown, with a refresh that replaces it (docs/console.md §2.12). */
export function ApiKeyCard({ apiKey }: { apiKey: string }) {
  const { t } = useTranslation(['profile', 'common', 'services']);
  const queryClient = useQueryClient();
  const [visible, setVisible] = useState(false);
  const [confirming, setConfirming] = useState(false);

  const rotate = useMutation({
    // GET is how the console asks for a new key (docs/console.md §7).
    mutationFn: () => call(routes.users.rotateToken, { notify: false }),
    onSuccess: (token) => {
      queryClient.setQueryData<SelfUser>(selfQueryKey, (old) => (old ? { ...old, token } : old));
      notify.success(t('apiKey.refreshed'));
    },
    onError: (err) => notify.error(t('apiKey.refreshFailed'), failureText(err, t)),
  });

  // The whole key, whether shown or masked: pasting it into a client is what the card is for (issue 15, item 9).
  const copyKey = async () => {
    const result = await copyText(apiKey);
    if (result.ok) notify.success(t('apiKey.copied'));
    else notify.error(t('services:copy.failed'), t(`services:copy.reasons.${result.reason}`));
  };

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('apiKey.title')}</CardTitle>
        <CardDescription>{t('apiKey.description')}</CardDescription>
      </CardHeader>
      <CardContent className="space-y-4">
        <div className="flex items-center gap-2 rounded-md border border-slate-200 bg-slate-50 p-2 pl-3 dark:border-slate-800 dark:bg-slate-950">
          <code className="min-w-0 flex-1 truncate font-mono text-sm" data-testid="api-key">
            {apiKey ? (visible ? apiKey : maskApiKey(apiKey)) : t('apiKey.none')}
          </code>
          <Button
            variant="ghost"
            size="icon"
            disabled={!apiKey}
            onClick={() => setVisible((v) => !v)}
            aria-label={visible ? t('apiKey.hide') : t('apiKey.show')}
          >
            {visible ? <EyeOff aria-hidden="true" /> : <Eye aria-hidden="true" />}
          </Button>
          <Button variant="ghost" size="icon" disabled={!apiKey} onClick={() => void copyKey()} aria-label={t('apiKey.copy')}>
            <Copy aria-hidden="true" />
          </Button>
        </div>
        <ul className="list-disc space-y-1 pl-5 text-sm text-slate-600 dark:text-slate-400">
          {NOTES.map((note) => (
            <li key={note}>{t(note)}</li>
          ))}
        </ul>
      </CardContent>
      <CardFooter>
        {/* aria-disabled, not disabled: the focus comes back here when the confirmation closes, mid-request. */}
        <Button variant="outline" aria-disabled={rotate.isPending || undefined} onClick={() => !rotate.isPending && setConfirming(true)}>
          {rotate.isPending ? <Spinner /> : <RefreshCw aria-hidden="true" />}
          {t('apiKey.refresh')}
        </Button>
      </CardFooter>
      <ConfirmDialog
        open={confirming}
        onOpenChange={setConfirming}
        title={t('apiKey.confirmTitle')}
        description={t('apiKey.confirmDescription')}
        confirmLabel={t('apiKey.refresh')}
        cancelLabel={t('common:actions.cancel')}
        onConfirm={() => rotate.mutate()}
      />
    </Card>
  );
}
