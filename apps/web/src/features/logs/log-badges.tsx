import { CircleX, Info, type LucideIcon, Package, Play, TriangleAlert } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { type LogLevel, type LogPhase, logLevels, logPhases } from './log-query';

type Tone = 'neutral' | 'info' | 'warning' | 'danger';

const phaseLook: Record<LogPhase, { tone: Tone; icon: LucideIcon }> = {
  install: { tone: 'info', icon: Package },
  run: { tone: 'neutral', icon: Play },
};

const levelLook: Record<LogLevel, { tone: Tone; icon: LucideIcon }> = {
  info: { tone: 'info', icon: Info },
  warn: { tone: 'warning', icon: TriangleAlert },
  error: { tone: 'danger', icon: CircleX },
};

/** Install or run; a value this console does not know is shown as the server sent it. */
export function PhaseBadge({ phase }: { phase: string }) {
  const { t } = useTranslation('logs');
  if (!logPhases.includes(phase as LogPhase)) return <Badge data-phase={phase}>{phase}</Badge>;
  const { tone, icon: Icon } = phaseLook[phase as LogPhase];
  return (
    <Badge tone={tone} data-phase={phase}>
      <Icon aria-hidden="true" />
      {t(`phase.${phase as LogPhase}`)}
    </Badge>
  );
}

/** Info, warn or error, each with its own colour and icon, so the level reads without colour too. */
export function LevelBadge({ level }: { level: string }) {
  const { t } = useTranslation('logs');
  if (!logLevels.includes(level as LogLevel)) return <Badge data-level={level}>{level}</Badge>;
  const { tone, icon: Icon } = levelLook[level as LogLevel];
  return (
    <Badge tone={tone} data-level={level}>
      <Icon aria-hidden="true" />
      {t(`level.${level as LogLevel}`)}
    </Badge>
  );
}
