import { CircleAlert } from 'lucide-react';
import type { ReactNode } from 'react';
import { cn } from '../../lib/cn';

/** A failure shown in place of content: a title and the reason, announced to screen readers. */
export function ErrorAlert({ title, children, className }: { title: string; children?: ReactNode; className?: string }) {
  return (
    <div
      role="alert"
      className={cn(
        'flex gap-3 rounded-lg border border-red-200 bg-red-50 p-4 text-red-900 dark:border-red-900 dark:bg-red-950/50 dark:text-red-200',
        className,
      )}
    >
      <CircleAlert aria-hidden="true" className="mt-0.5 size-5 shrink-0" />
      <div className="space-y-1">
        <p className="font-medium">{title}</p>
        {children && <div className="text-sm">{children}</div>}
      </div>
    </div>
  );
}
