import type { Group } from '@toolport/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { useSelf } from '../../lib/self';
import { useServerStatus } from '../../lib/server-status';
import {
  ClientSnippets,
  DEFAULT_ENDPOINT_TYPE,
  EndpointSection,
  type EndpointType,
  EndpointTypeChoice,
  gatewayHost,
  OpenApiSection,
  useCopy,
} from '../services';
import { groupEndpointUrl } from './group-endpoint';

/**
 * How to connect to a group: the same endpoint choice, URL, header and client snippets as a service's
 * Configure dialog (docs/console.md §2.6), pointed at /group/{name}/…, and its OpenAPI face at /openapi/group/{name}. The key is the caller's own, from
 * GET /api/user/self; the page never holds anyone else's.
 */
export default function GroupConfigDialog({
  group,
  open,
  onOpenChange,
}: {
  group: Group;
  open: boolean;
  onOpenChange(open: boolean): void;
}) {
  const { t } = useTranslation('groups');
  const [type, setType] = useState<EndpointType>(DEFAULT_ENDPOINT_TYPE);
  const { copy, copiedId } = useCopy();
  const self = useSelf();
  const status = useServerStatus();
  const token = self.data?.token || undefined;
  const host = gatewayHost(status.data?.server_address, window.location.origin);
  const url = groupEndpointUrl(host, group.name, type);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="max-w-2xl">
        <DialogHeader>
          <DialogTitle>{t('config.title', { name: group.display_name || group.name })}</DialogTitle>
          <DialogDescription>{t('config.description', { separator: group.separator })}</DialogDescription>
        </DialogHeader>
        <EndpointTypeChoice value={type} onChange={setType} />
        <EndpointSection name={group.name} url={url} type={type} token={token} copy={copy} copiedId={copiedId} />
        <ClientSnippets name={group.name} url={url} type={type} token={token} copy={copy} copiedId={copiedId} />
        <OpenApiSection host={host} kind="group" name={group.name} token={token} copy={copy} copiedId={copiedId} />
      </DialogContent>
    </Dialog>
  );
}
