import type { ComponentProps } from 'react';
import { cn } from '../../lib/cn';

export const inputClass =
  'h-9 w-full min-w-0 rounded-md border border-slate-300 bg-white px-3 text-sm shadow-xs placeholder:text-slate-400 ' +
  'focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-teal-600 disabled:opacity-50 ' +
  'aria-invalid:border-red-500 read-only:bg-slate-50 dark:border-slate-700 dark:bg-slate-950 dark:read-only:bg-slate-900';

export function Input({ className, type = 'text', ...props }: ComponentProps<'input'>) {
  return <input type={type} className={cn(inputClass, className)} {...props} />;
}
