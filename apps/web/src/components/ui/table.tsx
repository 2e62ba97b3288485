import { createContext, type HTMLAttributes, type TdHTMLAttributes, type ThHTMLAttributes, useContext } from 'react';
import { cn } from '../../lib/cn';

/**
 * Below which width of its box a table turns each row into a card (docs/console.md §3, "Narrow screens"):
 * `lg` = 32rem, `2xl` = 42rem (Tailwind's container sizes). The box's width decides, not the screen's, so a
 * table beside the sidebar stacks as soon as it no longer fits. Without it the table scrolls sideways in its
 * own box.
 */
export type StackBelow = 'lg' | '2xl';

/** Every class spelled out, so Tailwind finds them. */
const stacked: Record<StackBelow, Record<'table' | 'head' | 'body' | 'headRow' | 'th' | 'row' | 'cell' | 'label', string>> = {
  lg: {
    table: '@max-lg:block',
    head: '@max-lg:block @max-lg:border-0',
    body: '@max-lg:block',
    headRow: '@max-lg:flex @max-lg:justify-end @max-lg:border-0',
    th: '@max-lg:hidden',
    row: '@max-lg:flex @max-lg:flex-col @max-lg:gap-1 @max-lg:py-3',
    cell: '@max-lg:flex @max-lg:min-w-0 @max-lg:max-w-none @max-lg:items-center @max-lg:justify-between @max-lg:gap-3 @max-lg:px-1 @max-lg:py-0.5 @max-lg:text-right',
    label:
      '@max-lg:before:shrink-0 @max-lg:before:text-left @max-lg:before:text-xs @max-lg:before:font-medium @max-lg:before:text-slate-600 @max-lg:before:content-[attr(data-label)] dark:@max-lg:before:text-slate-400',
  },
  '2xl': {
    table: '@max-2xl:block',
    head: '@max-2xl:block @max-2xl:border-0',
    body: '@max-2xl:block',
    headRow: '@max-2xl:flex @max-2xl:justify-end @max-2xl:border-0',
    th: '@max-2xl:hidden',
    row: '@max-2xl:flex @max-2xl:flex-col @max-2xl:gap-1 @max-2xl:py-3',
    cell: '@max-2xl:flex @max-2xl:min-w-0 @max-2xl:max-w-none @max-2xl:items-center @max-2xl:justify-between @max-2xl:gap-3 @max-2xl:px-1 @max-2xl:py-0.5 @max-2xl:text-right',
    label:
      '@max-2xl:before:shrink-0 @max-2xl:before:text-left @max-2xl:before:text-xs @max-2xl:before:font-medium @max-2xl:before:text-slate-600 @max-2xl:before:content-[attr(data-label)] dark:@max-2xl:before:text-slate-400',
  },
};

const StackContext = createContext<StackBelow | undefined>(undefined);
/** True inside the header, whose row lines up the kept headers rather than becoming a card. */
const HeaderContext = createContext(false);
const useStacked = () => {
  const below = useContext(StackContext);
  return below && stacked[below];
};

/**
 * A table that scrolls sideways inside its own box on narrow screens instead of widening the page, or, with
 * `stackBelow`, shows each row as a card of label and value lines there; the box is positioned so that
 * absolutely placed content (screen-reader-only text) stays inside it.
 */
export function Table({ className, stackBelow, ...props }: HTMLAttributes<HTMLTableElement> & { stackBelow?: StackBelow }) {
  return (
    <StackContext.Provider value={stackBelow}>
      <div className="@container relative w-full overflow-x-auto">
        <table className={cn('w-full caption-bottom text-sm', stackBelow && stacked[stackBelow].table, className)} {...props} />
      </div>
    </StackContext.Provider>
  );
}

export function TableHeader({ className, ...props }: HTMLAttributes<HTMLTableSectionElement>) {
  const s = useStacked();
  return (
    <HeaderContext.Provider value={true}>
      <thead className={cn('border-b border-slate-200 dark:border-slate-800', s?.head, className)} {...props} />
    </HeaderContext.Provider>
  );
}

export function TableBody({ className, ...props }: HTMLAttributes<HTMLTableSectionElement>) {
  const s = useStacked();
  return <tbody className={cn('[&_tr:last-child]:border-0', s?.body, className)} {...props} />;
}

export function TableRow({ className, ...props }: HTMLAttributes<HTMLTableRowElement>) {
  const s = useStacked();
  const header = useContext(HeaderContext);
  return <tr className={cn('border-b border-slate-100 dark:border-slate-800', header ? s?.headRow : s?.row, className)} {...props} />;
}

/** A column header; in a stacked table only those marked `keepWhenStacked` (a sort button) stay, above the cards. */
export function TableHead({
  className,
  keepWhenStacked,
  ...props
}: ThHTMLAttributes<HTMLTableCellElement> & { keepWhenStacked?: boolean }) {
  const s = useStacked();
  return (
    <th
      className={cn(
        'h-10 px-3 text-left align-middle font-medium text-slate-600 dark:text-slate-400',
        s && !keepWhenStacked && s.th,
        className,
      )}
      {...props}
    />
  );
}

/** A cell; in a stacked table `label` (the column's name) is shown before its value. */
export function TableCell({ className, label, ...props }: TdHTMLAttributes<HTMLTableCellElement> & { label?: string }) {
  const s = useStacked();
  return (
    <td
      data-label={s && label ? label : undefined}
      className={cn('px-3 py-2.5 align-middle', s?.cell, s && label && s.label, className)}
      {...props}
    />
  );
}
