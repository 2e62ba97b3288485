import { RadioGroup as RadioGroupPrimitive } from 'radix-ui';
import type { ComponentProps } from 'react';
import { cn } from '../../lib/cn';

/** One choice out of a few; arrow keys move the choice (radix). */
export function RadioGroup({ className, ...props }: ComponentProps<typeof RadioGroupPrimitive.Root>) {
  return <RadioGroupPrimitive.Root className={cn('flex flex-wrap gap-4', className)} {...props} />;
}

export function RadioGroupItem({ className, ...props }: ComponentProps<typeof RadioGroupPrimitive.Item>) {
  return (
    <RadioGroupPrimitive.Item
      className={cn(
        'inline-flex size-4 shrink-0 items-center justify-center rounded-full border border-slate-400 dark:border-slate-600',
        'focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-teal-600 data-[state=checked]:border-teal-600',
        className,
      )}
      {...props}
    >
      <RadioGroupPrimitive.Indicator className="size-2 rounded-full bg-teal-600" />
    </RadioGroupPrimitive.Item>
  );
}
