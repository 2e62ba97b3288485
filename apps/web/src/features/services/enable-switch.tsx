import { useTranslation } from 'react-i18next';
import { Switch } from '../../components/ui/switch';
import { Tooltip } from '../../components/ui/tooltip';

/**
 * A service's enable switch. Only admins may toggle (the server refuses others), so for everyone else it
 * shows the state, disabled, with a tooltip saying why. Disabled while the service is busy.
 */
export function EnableSwitch({
  name,
  enabled,
  admin,
  busy,
  onToggle,
}: {
  name: string;
  enabled: boolean;
  admin: boolean;
  busy: boolean;
  onToggle(): void;
}) {
  const { t } = useTranslation('services');
  const control = (
    <Switch
      checked={enabled}
      disabled={!admin || busy}
      aria-busy={busy || undefined}
      onCheckedChange={onToggle}
      aria-label={t('card.enableService', { name })}
    />
  );
  if (admin) return control;
  return (
    <Tooltip content={t('card.adminOnlyToggle')}>
      {/* A disabled button gets no pointer or focus events: the wrapper carries the tooltip. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users reach the explanation too. */}
      <span tabIndex={0} className="inline-flex rounded-full focus-visible:outline-2 focus-visible:outline-teal-600">
        {control}
      </span>
    </Tooltip>
  );
}
