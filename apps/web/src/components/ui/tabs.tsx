import { Tabs as TabsPrimitive } from 'radix-ui';
import type { ComponentProps } from 'react';
import { cn } from '../../lib/cn';

export const Tabs = TabsPrimitive.Root;

/**
 * A row of tabs; arrow keys move between them (radix). On a narrow screen the tabs wrap onto a second line
 * rather than scroll out of sight (the Configure dialog's six clients at 360 px, docs/console.md §3).
 */
export function TabsList({ className, ...props }: ComponentProps<typeof TabsPrimitive.List>) {
  return (
    <TabsPrimitive.List
      className={cn(
        'inline-flex min-h-9 max-w-full flex-wrap items-center gap-1 rounded-lg bg-slate-100 p-1 text-slate-600 dark:bg-slate-800 dark:text-slate-400',
        className,
      )}
      {...props}
    />
  );
}

export function TabsTrigger({ className, ...props }: ComponentProps<typeof TabsPrimitive.Trigger>) {
  return (
    <TabsPrimitive.Trigger
      className={cn(
        'inline-flex h-7 shrink-0 items-center justify-center gap-1.5 whitespace-nowrap rounded-md px-3 text-sm font-medium transition-colors',
        'hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-teal-600 disabled:opacity-50 dark:hover:text-slate-100',
        'data-[state=active]:bg-white data-[state=active]:text-slate-900 data-[state=active]:shadow-sm',
        'dark:data-[state=active]:bg-slate-950 dark:data-[state=active]:text-slate-100',
        className,
      )}
      {...props}
    />
  );
}

export function TabsContent({ className, ...props }: ComponentProps<typeof TabsPrimitive.Content>) {
  return <TabsPrimitive.Content className={cn('focus-visible:outline-2 focus-visible:outline-teal-600', className)} {...props} />;
}
