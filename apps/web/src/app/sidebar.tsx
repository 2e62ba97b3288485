import { SampleConfigButton } from './sample-config-button';
import { SidebarNav } from './sidebar-nav';

/** The sidebar of wide screens; below `md` the same list opens from the top bar's menu button. */
export function Sidebar() {
  return (
    <aside className="sticky top-14 hidden h-[calc(100dvh-3.5rem)] w-56 shrink-0 flex-col justify-between border-r border-slate-200 bg-white p-3 md:flex dark:border-slate-800 dark:bg-slate-900">
      <SidebarNav />
      <SampleConfigButton />
    </aside>
  );
}
