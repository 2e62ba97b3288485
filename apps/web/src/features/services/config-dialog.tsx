import type { InstalledService } from '@toolport/contract';
import { Info } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { clipboardApiAvailable } from '../../lib/clipboard';
import { useSelf } from '../../lib/self';
import { useServerStatus } from '../../lib/server-status';
import { ClientSnippets } from './client-snippets';
import { DailyLimitSection } from './daily-limit-section';
import { DEFAULT_ENDPOINT_TYPE, type EndpointType, endpointUrl, gatewayHost } from './endpoint-config';
import { EndpointSection, EndpointTypeChoice } from './endpoint-section';
import { OAuthSection } from './oauth-section';
import { OpenApiSection } from './openapi-section';
import { useCopy } from './use-copy';

interface ConfigDialogProps {
  service: InstalledService;
  admin: boolean;
  open: boolean;
  onOpenChange(open: boolean): void;
}

/**
 * How to connect to a service (docs/console.md §2.6): endpoint type, URL, header and JSON to copy, ready
 * client snippets, the OpenAPI face with an Open WebUI connection, and the requests-per-day limit. The user's API key comes from GET /api/user/self.
 */
export default function ConfigDialog({ service, admin, open, onOpenChange }: ConfigDialogProps) {
  const { t } = useTranslation('services');
  const [type, setType] = useState<EndpointType>(DEFAULT_ENDPOINT_TYPE);
  const { copy, copiedId } = useCopy();
  const self = useSelf();
  const status = useServerStatus();
  const token = self.data?.token || undefined;
  const host = gatewayHost(status.data?.server_address, window.location.origin);
  const url = endpointUrl(host, service.name, type);
  const title = service.display_name || service.name || t('config.defaultTitle');

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="max-w-2xl">
        <DialogHeader>
          <DialogTitle>{title}</DialogTitle>
          <DialogDescription>{t('config.description')}</DialogDescription>
        </DialogHeader>
        {!clipboardApiAvailable() && (
          <p className="flex gap-2 rounded-md bg-amber-50 p-3 text-sm text-amber-900 dark:bg-amber-950/50 dark:text-amber-200">
            <Info aria-hidden="true" className="mt-0.5 size-4 shrink-0" />
            {t('config.clipboardUnsupported')}
          </p>
        )}
        <EndpointTypeChoice value={type} onChange={setType} />
        <EndpointSection name={service.name} url={url} type={type} token={token} copy={copy} copiedId={copiedId} />
        {!token && !self.isPending && <p className="text-sm text-slate-600 dark:text-slate-400">{t('config.noToken')}</p>}
        <ClientSnippets name={service.name} url={url} type={type} token={token} copy={copy} copiedId={copiedId} />
        <OpenApiSection host={host} kind="proxy" name={service.name} token={token} copy={copy} copiedId={copiedId} />
        <OAuthSection service={service} admin={admin} />
        <DailyLimitSection service={service} admin={admin} />
      </DialogContent>
    </Dialog>
  );
}
