import type { ParseKeys } from 'i18next';
import { ChartColumn, type LucideIcon, PackagePlus, Server, UserRound } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Card, CardContent, CardHeader, CardTitle } from '../../components/ui/card';
import { isAdmin, useSession } from '../../lib/session';

interface QuickAction {
  to: string;
  label: ParseKeys<'dashboard'>;
  icon: LucideIcon;
  adminOnly: boolean;
}

const actions: QuickAction[] = [
  { to: '/services', label: 'quick.services', icon: Server, adminOnly: false },
  { to: '/analytics', label: 'quick.analytics', icon: ChartColumn, adminOnly: false },
  { to: '/profile', label: 'quick.profile', icon: UserRound, adminOnly: false },
  { to: '/market', label: 'quick.installService', icon: PackagePlus, adminOnly: true },
];

/** Shortcuts of docs/console.md §2.4; 'install service' only for admins. */
export function QuickActions() {
  const { t } = useTranslation('dashboard');
  const { user } = useSession();
  const admin = isAdmin(user);
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('quick.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <ul className="grid gap-2 sm:grid-cols-2">
          {actions
            .filter((action) => admin || !action.adminOnly)
            .map(({ to, label, icon: Icon }) => (
              <li key={to}>
                <Link
                  to={to}
                  className="flex h-full items-center gap-3 rounded-md border border-slate-200 p-3 text-sm font-medium hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-teal-600 dark:border-slate-800 dark:hover:bg-slate-800"
                >
                  <Icon aria-hidden="true" className="size-4 text-teal-600 dark:text-teal-400" />
                  {t(label)}
                </Link>
              </li>
            ))}
        </ul>
      </CardContent>
    </Card>
  );
}
