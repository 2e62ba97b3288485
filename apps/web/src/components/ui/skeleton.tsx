import type { HTMLAttributes } from 'react';
import { cn } from '../../lib/cn';

/** A grey block in place of content that is loading; give it the content's size so nothing moves after. */
export function Skeleton({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return <div aria-hidden="true" className={cn('animate-pulse rounded-md bg-slate-200 dark:bg-slate-800', className)} {...props} />;
}
