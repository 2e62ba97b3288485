import { type LucideIcon, Monitor, Moon, Sun } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Button } from '../components/ui/button';
import { nextTheme, type ThemeChoice, useTheme } from '../lib/theme';

const icons: Record<ThemeChoice, LucideIcon> = { light: Sun, dark: Moon, system: Monitor };

/** Cycles light → dark → system; the label names the current choice, the tooltip the next one. */
export function ThemeToggle() {
  const { t } = useTranslation();
  const { choice, setChoice } = useTheme();
  const next = nextTheme(choice);
  const Icon = icons[choice];
  return (
    <Button
      variant="ghost"
      onClick={() => setChoice(next)}
      title={t('theme.switchTo', { theme: t(`theme.${next}`) })}
      aria-label={t('theme.current', { theme: t(`theme.${choice}`) })}
      className="px-2 lg:px-3"
    >
      <Icon aria-hidden="true" />
      <span className="hidden lg:inline">{t(`theme.${choice}`)}</span>
    </Button>
  );
}
