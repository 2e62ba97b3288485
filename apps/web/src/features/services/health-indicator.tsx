import type { InstalledService } from '@toolport/contract';
import { Info, RefreshCw, RotateCw, ScrollText } from 'lucide-react';
import { Popover } from 'radix-ui';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '../../components/ui/button';
import { Tooltip } from '../../components/ui/tooltip';
import { cn } from '../../lib/cn';
import { CopyButton } from './copy-button';
import { type HealthState, healthLineOf, healthStateOf, missingConnectionOf, shownStateOf } from './health';
import { ConnectButton } from './oauth-section';
import { useCopy } from './use-copy';

const dotClass: Record<HealthState, string> = {
  healthy: 'bg-emerald-500',
  unhealthy: 'bg-red-500',
  stopped: 'bg-slate-400',
  needs_authorization: 'bg-sky-500',
  unknown: 'bg-amber-400',
};

type HealthFacts = Pick<InstalledService, 'health_status' | 'health_details' | 'tool_count'> &
  Partial<Pick<InstalledService, 'oauth_status' | 'oauth_mode'>>;

/**
 * The line that says why a service has its colour: tool count when healthy, the server's reason when not, and
 * who must connect it when it needs authorization (`admin`: the reader may connect a shared one).
 */
export function useHealthLine(service: HealthFacts, admin = false): string {
  const { t } = useTranslation('services');
  const line = healthLineOf(service, admin);
  return t(line.key, line.values);
}

/**
 * The coloured dot of a service's health; its meaning is in the accessible text, not the colour alone. Hovering
 * or focusing it shows the reason (issue 15, item 1).
 */
export function HealthDot({ service, admin = false }: { service: HealthFacts; admin?: boolean }) {
  const { t } = useTranslation('services');
  const state = shownStateOf(service);
  const line = useHealthLine(service, admin);
  const label = `${t('health.label', { status: t(`health.${state}`) })}. ${line}`;
  return (
    <Tooltip content={line}>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: focus shows the reason to keyboard users as hover does. */}
      <span role="img" aria-label={label} tabIndex={0} className="inline-flex items-center rounded-full p-1" data-health={state}>
        <span aria-hidden="true" className={cn('size-2.5 rounded-full', dotClass[state])} />
      </span>
    </Tooltip>
  );
}

/**
 * Why a red service is red, in full (issue 15, item 1; MCPHub's error popover, MetaMCP's Reconnect): the server's
 * reason as it gave it, a Copy button for it, and for admins Reconnect (restart the link, check again) and the
 * link to the service's logs.
 */
function HealthPopover({
  service,
  name,
  admin,
  busy,
  reconnecting,
  onReconnect,
}: {
  service: HealthFacts & Pick<InstalledService, 'id'>;
  name: string;
  admin: boolean;
  busy: boolean;
  reconnecting: boolean;
  onReconnect?(): void;
}) {
  const { t } = useTranslation('services');
  const { copy, copiedId } = useCopy();
  const reason = service.health_details.trim() || t('health.line.unhealthyNoReason');
  return (
    <Popover.Root>
      <Popover.Trigger asChild>
        <button
          type="button"
          className="inline-flex shrink-0 items-center gap-1 text-teal-700 underline underline-offset-2 dark:text-teal-300"
          aria-label={t('health.popover.open', { name })}
        >
          <Info aria-hidden="true" className="size-3.5" />
          {t('health.popover.why')}
        </button>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content
          sideOffset={6}
          collisionPadding={8}
          aria-label={t('health.popover.title', { name })}
          data-testid="health-popover"
          className="z-50 w-80 max-w-[calc(100vw-1rem)] space-y-3 rounded-md border border-slate-200 bg-white p-3 text-sm shadow-lg dark:border-slate-700 dark:bg-slate-900"
        >
          <p className="font-semibold">{t('health.popover.title', { name })}</p>
          <pre
            data-testid="health-popover-reason"
            className="max-h-48 overflow-auto whitespace-pre-wrap break-words rounded bg-slate-100 p-2 font-mono text-xs text-red-800 dark:bg-slate-800 dark:text-red-200"
          >
            {reason}
          </pre>
          <div className="flex flex-wrap items-center gap-2">
            <CopyButton
              copied={copiedId === 'reason'}
              label={t('health.popover.reason')}
              onCopy={() => void copy('reason', reason, 'health.popover.copied')}
            />
            {admin && onReconnect && (
              <Button size="sm" onClick={onReconnect} disabled={busy}>
                <RotateCw aria-hidden="true" className={cn(reconnecting && 'animate-spin')} />
                {reconnecting ? t('health.popover.reconnecting') : t('health.popover.reconnect')}
              </Button>
            )}
            {admin && (
              <Link
                to={`/logs?service_id=${service.id}`}
                className="inline-flex items-center gap-1 text-teal-700 underline underline-offset-2 dark:text-teal-300"
              >
                <ScrollText aria-hidden="true" className="size-3.5" />
                {t('health.logs')}
              </Link>
            )}
          </div>
          <Popover.Arrow className="fill-white dark:fill-slate-900" />
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}

/** The reason as a line of text under the service's name; on a red service the popover with the whole reason. */
export function HealthReason({
  service,
  name = '',
  admin,
  busy = false,
  reconnecting = false,
  onReconnect,
}: {
  service: HealthFacts & Pick<InstalledService, 'id'>;
  name?: string;
  admin: boolean;
  busy?: boolean;
  reconnecting?: boolean;
  onReconnect?(): void;
}) {
  const { t } = useTranslation('services');
  const state = healthStateOf(service.health_status);
  const line = useHealthLine(service, admin);
  // Shared connections are made by administrators, per-user ones by each user (docs/console.md §2.5).
  const missing = missingConnectionOf(service);
  const mayConnect = missing === 'mine' || (missing === 'shared' && admin);
  return (
    <p
      data-testid="health-reason"
      data-needs-authorization={missing ? 'true' : undefined}
      className="flex min-w-0 items-start gap-2 text-xs"
    >
      <span
        className={cn(
          'min-w-0 break-words',
          state === 'unhealthy'
            ? 'text-red-700 dark:text-red-300'
            : missing
              ? 'text-sky-800 dark:text-sky-200'
              : 'text-slate-600 dark:text-slate-300',
        )}
      >
        {line}
      </span>
      {mayConnect && <ConnectButton service={service} name={name} disabled={busy} />}
      {state === 'unhealthy' && (
        <HealthPopover service={service} name={name} admin={admin} busy={busy} reconnecting={reconnecting} onReconnect={onReconnect} />
      )}
      {admin && state === 'unhealthy' && (
        <Link
          to={`/logs?service_id=${service.id}`}
          className="inline-flex shrink-0 items-center gap-1 text-teal-700 underline underline-offset-2 dark:text-teal-300"
        >
          <ScrollText aria-hidden="true" className="size-3.5" />
          {t('health.logs')}
        </Link>
      )}
    </p>
  );
}

/** Health dot and the button that checks health now; the button spins and is disabled while the service is busy. */
export function HealthIndicator({
  service,
  name,
  admin = false,
  busy,
  checking,
  onCheck,
}: {
  service: HealthFacts;
  name: string;
  admin?: boolean;
  busy: boolean;
  checking: boolean;
  onCheck(): void;
}) {
  const { t } = useTranslation('services');
  const label = checking ? t('health.checking') : t('card.checkHealth', { name });
  return (
    <div className="flex items-center gap-1">
      <HealthDot service={service} admin={admin} />
      <Button variant="ghost" size="icon" className="size-7" aria-label={label} title={label} disabled={busy} onClick={onCheck}>
        <RefreshCw aria-hidden="true" className={cn(checking && 'animate-spin')} />
      </Button>
    </div>
  );
}
