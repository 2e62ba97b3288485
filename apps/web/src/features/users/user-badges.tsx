import type { PublicUser } from '@toolport/contract';
import { MessageCircle } from 'lucide-react';
import type { ComponentType } from 'react';
import { useTranslation } from 'react-i18next';
import { GitHubMark, GoogleMark } from '../../components/icons/brand-icons';
import { Badge } from '../../components/ui/badge';
import { type RoleKind, roleKindOf } from './user-rules';

const roleTones: Record<RoleKind, 'neutral' | 'info' | 'warning' | 'danger'> = {
  user: 'neutral',
  admin: 'info',
  superAdmin: 'warning',
  unknown: 'danger',
};

/** 1 user, 10 admin, 100 super admin, anything else unknown (docs/console.md §3). */
export function RoleBadge({ role }: { role: number }) {
  const { t } = useTranslation('users');
  const kind = roleKindOf(role);
  return (
    <Badge tone={roleTones[kind]} className="whitespace-nowrap" data-role={role}>
      {t(`roles.${kind}`)}
    </Badge>
  );
}

const providers: { key: 'github' | 'google' | 'wechat'; field: keyof PublicUser; Icon: ComponentType<{ className?: string }> }[] = [
  { key: 'github', field: 'github_id', Icon: GitHubMark },
  { key: 'google', field: 'google_id', Icon: GoogleMark },
  { key: 'wechat', field: 'wechat_id', Icon: MessageCircle },
];

/** The sign-in providers bound to the account, as their marks; '-' when none. */
export function Bindings({ user }: { user: PublicUser }) {
  const { t } = useTranslation('users');
  const bound = providers.filter(({ field }) => user[field]);
  if (bound.length === 0) {
    return (
      // relative: the screen-reader text is positioned inside the table's scroll box, not past the page edge.
      <span className="relative text-slate-500 dark:text-slate-400">
        <span aria-hidden="true">-</span>
        <span className="sr-only">{t('bindings.none')}</span>
      </span>
    );
  }
  return (
    <span className="flex items-center gap-2">
      {bound.map(({ key, field, Icon }) => {
        const label = t(`bindings.${key}`, { id: String(user[field]) });
        return (
          <span key={key} role="img" aria-label={label} title={label} className="inline-flex">
            <Icon className="size-4" />
          </span>
        );
      })}
    </span>
  );
}
