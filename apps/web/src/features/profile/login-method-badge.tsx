import type { LoginMethod } from '@toolport/contract';
import { KeyRound, MessageCircle } from 'lucide-react';
import type { ComponentType } from 'react';
import { useTranslation } from 'react-i18next';
import { GitHubMark, GoogleMark } from '../../components/icons/brand-icons';
import { Badge } from '../../components/ui/badge';

const icons: Record<LoginMethod, ComponentType<{ className?: string }>> = {
  github: GitHubMark,
  google: GoogleMark,
  wechat: MessageCircle,
  password: KeyRound,
};

/** How the user signs in (docs/console.md §2.12): GitHub, Google, WeChat or password. */
export function LoginMethodBadge({ method }: { method: LoginMethod }) {
  const { t } = useTranslation('profile');
  const Icon = icons[method];
  return (
    <Badge tone="info" className="px-2.5 py-1 text-sm" data-testid="login-method">
      <Icon className="size-3.5" />
      {t('loginMethod.label', { method: t(`loginMethod.${method}`) })}
    </Badge>
  );
}
