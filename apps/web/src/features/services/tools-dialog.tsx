import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type InstalledService, routes, type ServiceTool, type ServiceTools } from '@toolport/contract';
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { Switch } from '../../components/ui/switch';
import { Textarea } from '../../components/ui/textarea';
import { call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { patchService } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { integerIdOf } from '../../lib/service-ids';
import { serviceTitle } from './service-view-props';
import { serviceCountsOf, toolCountsOfListing } from './tool-counts';
import { TryTool } from './try-tool';

interface ToolsDialogProps {
  service: InstalledService;
  admin: boolean;
  open: boolean;
  onOpenChange(open: boolean): void;
}

const toolsKey = (id: number) => ['service-tools', id] as const;

/** Whether a tool matches the filter: its name as clients see it, its original name or either description. */
export function toolMatches(tool: ServiceTool, filter: string): boolean {
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const text = [tool.name, tool.original_name, tool.alias ?? '', tool.description, tool.original_description].join('\n').toLowerCase();
  return words.every((word) => text.includes(word));
}

/**
 * A service's tools as its upstream lists them now (GET /mcp_services/{id}/tools), with the overrides the
 * gateway applies on /proxy and in every group; admins switch tools on and off, rename and re-describe
 * them (PUT /mcp_services/{id}/tools/{original_name}, decision 0026).
 */
export default function ToolsDialog({ service, admin, open, onOpenChange }: ToolsDialogProps) {
  const { t } = useTranslation('services');
  const queryClient = useQueryClient();
  const id = integerIdOf(service.id);
  const query = useQuery({
    queryKey: toolsKey(service.id),
    queryFn: () => call(routes.services.tools, { params: { id }, notify: false }),
    enabled: open,
    retry: false,
  });
  const save = async (tool: ServiceTool, body: { enabled?: boolean | null; alias?: string | null; description?: string | null }) => {
    try {
      const data = await call(routes.services.setTool, { params: { id, original_name: tool.original_name }, body, notify: false });
      queryClient.setQueryData<ServiceTools>(toolsKey(service.id), data);
      notify.success(t('tools.saved', { name: tool.original_name }));
    } catch (err) {
      showFailure(err, t, { failed: t('toasts.updateFailed'), error: t('toasts.updateFailed'), fallback: t('errors.unknown') });
    }
  };
  const tools = query.data?.tools ?? [];
  const counts = query.data ? toolCountsOfListing(query.data) : undefined;
  const listing = query.data;
  // The live listing is the newer count: the card takes it too, so both say the same "N of M" (issue 29).
  useEffect(() => {
    if (listing) void patchService(queryClient, service.id, serviceCountsOf(toolCountsOfListing(listing)));
  }, [listing, queryClient, service.id]);
  const [filter, setFilter] = useState('');
  const filterId = useId();
  const shown = tools.filter((tool) => toolMatches(tool, filter)).length;

  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        if (!next) setFilter('');
        onOpenChange(next);
      }}
    >
      {/* The header and the filter stay in place; only the list scrolls (issue 29). */}
      <DialogContent className="flex max-h-[90dvh] flex-col overflow-hidden sm:max-w-2xl">
        <DialogHeader className="pr-6">
          <DialogTitle>{t('tools.title', { name: serviceTitle(service) })}</DialogTitle>
          <DialogDescription>{counts ? t('tools.count', counts) : t('tools.description')}</DialogDescription>
        </DialogHeader>
        {tools.length > 0 && (
          <div className="space-y-1.5">
            <Label htmlFor={filterId}>{t('tools.filter')}</Label>
            <Input
              id={filterId}
              type="search"
              value={filter}
              autoComplete="off"
              placeholder={t('tools.filterPlaceholder')}
              aria-describedby={`${filterId}-count`}
              onChange={(e) => setFilter(e.target.value)}
            />
            <p id={`${filterId}-count`} aria-live="polite" className="text-xs text-slate-600 dark:text-slate-400">
              {filter.trim()
                ? shown === 0
                  ? t('tools.filterNone', { filter: filter.trim() })
                  : t('tools.filterShown', { shown, total: tools.length })
                : ''}
            </p>
          </div>
        )}
        <div data-testid="tools-list" className="-mx-2 min-h-0 flex-1 overflow-y-auto px-2 pb-1">
          {query.isPending && <p className="text-sm text-slate-600 dark:text-slate-400">{t('tools.loading')}</p>}
          {query.isError && (
            <p role="alert" className="text-sm text-red-600 dark:text-red-400">
              {query.error instanceof Error ? query.error.message : t('tools.failed')}
            </p>
          )}
          <ul className="flex flex-col gap-3">
            {tools.map((tool) => (
              // Hidden rather than left out: a row keeps what was typed in it while the filter hides it.
              <ToolRow
                key={tool.original_name}
                serviceId={id}
                tool={tool}
                admin={admin}
                hidden={!toolMatches(tool, filter)}
                onSave={(body) => save(tool, body)}
              />
            ))}
          </ul>
        </div>
      </DialogContent>
    </Dialog>
  );
}

function ToolRow({
  serviceId,
  tool,
  admin,
  hidden,
  onSave,
}: {
  serviceId: number;
  tool: ServiceTool;
  admin: boolean;
  hidden: boolean;
  onSave(body: { enabled?: boolean | null; alias?: string | null; description?: string | null }): Promise<void>;
}) {
  const { t } = useTranslation('services');
  const [alias, setAlias] = useState(tool.alias ?? '');
  const [description, setDescription] = useState(tool.description);
  const [busy, setBusy] = useState(false);
  const run = async (body: Parameters<typeof onSave>[0]) => {
    setBusy(true);
    await onSave(body);
    setBusy(false);
  };
  const changed = alias.trim() !== (tool.alias ?? '') || description !== tool.description;
  const fieldId = useId();
  return (
    <li data-testid="tool-row" hidden={hidden} className="rounded-md border border-slate-200 p-3 dark:border-slate-800">
      <div className="flex items-start justify-between gap-2">
        <div className="min-w-0">
          <p className="font-mono text-sm font-semibold">{tool.name}</p>
          {tool.alias && (
            <p className="font-mono text-xs text-slate-500 dark:text-slate-400">{t('tools.originalName', { name: tool.original_name })}</p>
          )}
        </div>
        <Switch
          checked={tool.enabled}
          disabled={!admin || busy}
          aria-label={t('tools.enable', { name: tool.original_name })}
          onCheckedChange={(checked) => run({ enabled: checked })}
        />
      </div>
      {admin ? (
        <div className="mt-2 flex flex-col gap-2">
          <div className="space-y-1">
            {/* A visible label; the accessible name starts with it and adds the tool (label in name). */}
            <Label htmlFor={`${fieldId}-alias`} className="text-xs">
              {t('tools.aliasLabel')}
            </Label>
            <Input
              id={`${fieldId}-alias`}
              value={alias}
              placeholder={tool.original_name}
              aria-label={t('tools.alias', { name: tool.original_name })}
              aria-describedby={`${fieldId}-alias-hint`}
              onChange={(e) => setAlias(e.target.value)}
            />
            <p id={`${fieldId}-alias-hint`} className="text-xs text-slate-600 dark:text-slate-400">
              {t('tools.aliasHint', { name: tool.original_name })}
            </p>
          </div>
          <div className="space-y-1">
            <Label htmlFor={`${fieldId}-description`} className="text-xs">
              {t('tools.descriptionLabel')}
            </Label>
            <Textarea
              id={`${fieldId}-description`}
              value={description}
              rows={2}
              aria-label={t('tools.descriptionOf', { name: tool.original_name })}
              onChange={(e) => setDescription(e.target.value)}
            />
          </div>
          <div className="flex gap-2">
            <Button
              size="sm"
              disabled={!changed || busy}
              onClick={() =>
                run({
                  alias: alias.trim() === '' ? null : alias.trim(),
                  description: description === tool.original_description ? null : description,
                })
              }
            >
              {t('tools.save')}
            </Button>
            {(tool.alias !== null || tool.description !== tool.original_description) && (
              <Button
                size="sm"
                variant="outline"
                disabled={busy}
                onClick={() => {
                  setAlias('');
                  setDescription(tool.original_description);
                  void run({ alias: null, description: null });
                }}
              >
                {t('tools.reset')}
              </Button>
            )}
          </div>
        </div>
      ) : (
        <p className="mt-1 text-sm text-slate-600 dark:text-slate-400">{tool.description}</p>
      )}
      {tool.enabled && (
        <details className="mt-2">
          <summary className="cursor-pointer text-xs text-slate-600 dark:text-slate-400">{t('try.open')}</summary>
          <TryTool serviceId={serviceId} tool={tool} />
        </details>
      )}
      <details className="mt-2">
        <summary className="cursor-pointer text-xs text-slate-600 dark:text-slate-400">{t('tools.inputSchema')}</summary>
        <pre className="mt-1 overflow-x-auto rounded bg-slate-50 p-2 text-xs dark:bg-slate-900">
          {JSON.stringify(tool.input_schema, null, 2)}
        </pre>
      </details>
    </li>
  );
}
