import { type ChangeEvent, type TextareaHTMLAttributes, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { cn } from '../../lib/cn';
import { RevealButton } from './password-input';
import { Textarea } from './textarea';

export const SECRET_DOTS = '••••••••';

/** `KEY=VALUE` lines with every value replaced by dots; a line without `=` is shown as it is. */
export function maskedLines(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const at = line.indexOf('=');
      return at < 0 || at === line.length - 1 ? line : `${line.slice(0, at + 1)}${SECRET_DOTS}`;
    })
    .join('\n');
}

/**
 * `KEY=VALUE` lines whose values are secrets (a service's environment, its request headers): the names are
 * shown and the values masked, read-only, until the reveal button shows them for editing, as PasswordInput
 * does for one secret (an empty field takes typing at once). The value itself is never changed by masking, so saving keeps it.
 */
export function SecretLinesTextarea({
  value,
  onChange,
  className,
  ...props
}: Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'value' | 'onChange'> & {
  value: string;
  onChange(e: ChangeEvent<HTMLTextAreaElement>): void;
}) {
  const { t } = useTranslation();
  const [visible, setVisible] = useState(false);
  // Nothing to hide (no value yet): typing is allowed at once, and what is typed stays shown.
  const hidden = !visible && maskedLines(value) !== value;
  return (
    <div className="relative">
      <Textarea
        {...props}
        value={hidden ? maskedLines(value) : value}
        readOnly={hidden}
        onChange={(e) => {
          if (hidden) return;
          setVisible(true);
          onChange(e);
        }}
        className={cn('pr-10', className)}
      />
      <RevealButton
        visible={visible}
        onToggle={() => setVisible((v) => !v)}
        label={visible ? t('secretLines.hide') : t('secretLines.show')}
      />
    </div>
  );
}
