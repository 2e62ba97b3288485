import type { SelectHTMLAttributes } from 'react';
import { cn } from '../../lib/cn';

/** The browser's own select, styled like an input: native keyboard and screen-reader behaviour, no extra code. */
export function Select({ className, ...props }: SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select
      className={cn(
        'h-9 w-full min-w-0 rounded-md border border-slate-300 bg-white px-2 text-sm shadow-xs',
        'focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-teal-600 disabled:opacity-60',
        'dark:border-slate-700 dark:bg-slate-950',
        className,
      )}
      {...props}
    />
  );
}
