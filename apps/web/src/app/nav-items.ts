import type { ParseKeys } from 'i18next';
import {
  Boxes,
  ChartColumn,
  LayoutDashboard,
  type LucideIcon,
  ScrollText,
  Server,
  Settings,
  ShieldCheck,
  Store,
  User,
  Users,
} from 'lucide-react';

export interface NavItem {
  to: string;
  label: ParseKeys<'common'>;
  icon: LucideIcon;
  /** Shown only to role >= 10 (docs/console.md §2.2). */
  adminOnly: boolean;
}

/** The sidebar, in order (docs/console.md §2.2). A new screen adds its entry here and its routes in router.tsx. */
export const navItems: NavItem[] = [
  { to: '/dashboard', label: 'nav.dashboard', icon: LayoutDashboard, adminOnly: false },
  { to: '/services', label: 'nav.services', icon: Server, adminOnly: false },
  { to: '/groups', label: 'nav.groups', icon: Boxes, adminOnly: false },
  { to: '/analytics', label: 'nav.analytics', icon: ChartColumn, adminOnly: false },
  { to: '/profile', label: 'nav.profile', icon: User, adminOnly: false },
  { to: '/market', label: 'nav.market', icon: Store, adminOnly: true },
  { to: '/users', label: 'nav.users', icon: Users, adminOnly: true },
  { to: '/logs', label: 'nav.logs', icon: ScrollText, adminOnly: true },
  { to: '/audit', label: 'nav.audit', icon: ShieldCheck, adminOnly: true },
  { to: '/preferences', label: 'nav.preferences', icon: Settings, adminOnly: true },
];

export const navItemsFor = (admin: boolean): NavItem[] => navItems.filter((item) => admin || !item.adminOnly);
