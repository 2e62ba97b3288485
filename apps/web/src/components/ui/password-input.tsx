import { Eye, EyeOff } from 'lucide-react';
import { type ComponentProps, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { cn } from '../../lib/cn';
import { inputClass } from './input';

/** The show/hide button of a secret field, inside its right edge; its label says what it will do next. */
export function RevealButton({ visible, onToggle, label }: { visible: boolean; onToggle(): void; label: string }) {
  return (
    <button
      type="button"
      onClick={onToggle}
      aria-label={label}
      className="absolute top-0 right-0 flex h-9 w-10 items-center justify-center rounded-r-md text-slate-500 dark:text-slate-400 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-teal-600 dark:hover:text-slate-100"
    >
      {visible ? <EyeOff aria-hidden="true" className="size-4" /> : <Eye aria-hidden="true" className="size-4" />}
    </button>
  );
}

/** A password field with a show/hide button; the button says what it will do next. */
export function PasswordInput({ className, ...props }: Omit<ComponentProps<'input'>, 'type'>) {
  const { t } = useTranslation();
  const [visible, setVisible] = useState(false);
  return (
    <div className="relative">
      <input type={visible ? 'text' : 'password'} className={cn(inputClass, 'pr-10', className)} {...props} />
      <RevealButton visible={visible} onToggle={() => setVisible((v) => !v)} label={visible ? t('password.hide') : t('password.show')} />
    </div>
  );
}
