import { useTranslation } from 'react-i18next';
import { Switch } from '../../components/ui/switch';
import { Tooltip } from '../../components/ui/tooltip';

/**
 * A service's enable switch. An admin's is the global switch. Anyone else's is personal (the server
 * turns the service off for that user alone); it is disabled, with a tooltip saying why, only while an
 * admin has the service off for everyone. Disabled while the service is busy.
 */
export function EnableSwitch({
  name,
  enabled,
  globallyEnabled,
  admin,
  busy,
  onToggle,
}: {
  name: string;
  enabled: boolean;
  globallyEnabled: boolean;
  admin: boolean;
  busy: boolean;
  onToggle(): void;
}) {
  const { t } = useTranslation('services');
  const offForEveryone = !admin && !globallyEnabled;
  const control = (
    <Switch
      checked={enabled}
      disabled={offForEveryone || busy}
      aria-busy={busy || undefined}
      onCheckedChange={onToggle}
      aria-label={t('card.enableService', { name })}
    />
  );
  if (admin) return control;
  return (
    <Tooltip content={offForEveryone ? t('card.offForEveryone') : t('card.personalToggle')}>
      {/* A disabled button gets no pointer or focus events: the wrapper carries the tooltip. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users reach the explanation too. */}
      <span tabIndex={0} className="inline-flex rounded-full focus-visible:outline-2 focus-visible:outline-teal-600">
        {control}
      </span>
    </Tooltip>
  );
}
