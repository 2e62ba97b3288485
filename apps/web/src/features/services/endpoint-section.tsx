import type { ParseKeys } from 'i18next';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { RadioGroup, RadioGroupItem } from '../../components/ui/radio-group';
import { CopyButton } from './copy-button';
import { authorizationHeaderText, type EndpointType, mcpServersConfig } from './endpoint-config';

export interface CopyProps {
  copy(id: string, text: string, successKey: ParseKeys<'services'>): Promise<void>;
  copiedId: string | null;
}

interface EndpointSectionProps extends CopyProps {
  name: string;
  url: string;
  type: EndpointType;
  token: string | undefined;
}

/**
 * Endpoint URL with copy; for SSE the 'Authorization=Bearer {token}' header line (when there is a key)
 * and the SSE config JSON; for streamable HTTP the HTTP config JSON; and Copy JSON (docs/console.md §2.6).
 */
export function EndpointSection({ name, url, type, token, copy, copiedId }: EndpointSectionProps) {
  const { t } = useTranslation('services');
  const id = useId();
  const json = mcpServersConfig(name, url, type, token);
  const header = token ? authorizationHeaderText(token) : undefined;
  return (
    <div className="space-y-4">
      <div className="space-y-2">
        <Label htmlFor={`${id}-url`}>{t('config.endpointUrl')}</Label>
        <div className="flex gap-2">
          <Input id={`${id}-url`} readOnly value={url} className="font-mono text-xs" onFocus={(e) => e.currentTarget.select()} />
          <CopyButton copied={copiedId === 'url'} label={t('copy.url')} onCopy={() => void copy('url', url, 'copy.urlCopied')} />
        </div>
      </div>
      {type === 'sse' && header && (
        <div className="space-y-2">
          <Label htmlFor={`${id}-header`}>{t('config.header')}</Label>
          <div className="flex gap-2">
            <Input id={`${id}-header`} readOnly value={header} className="font-mono text-xs" onFocus={(e) => e.currentTarget.select()} />
            <CopyButton
              copied={copiedId === 'header'}
              label={t('copy.header')}
              onCopy={() => void copy('header', header, 'copy.headerCopied')}
            />
          </div>
        </div>
      )}
      <figure aria-labelledby={`${id}-json-label`} className="space-y-2">
        <div className="flex items-center justify-between gap-2">
          <span id={`${id}-json-label`} className="text-sm font-medium">
            {type === 'sse' ? t('config.sseConfig') : t('config.httpConfig')}
          </span>
          <Button
            variant="outline"
            size="sm"
            onClick={() => void copy('json', json, 'copy.jsonCopied')}
            data-copied={copiedId === 'json' || undefined}
          >
            {copiedId === 'json' ? t('copy.copied') : t('config.copyJson')}
          </Button>
        </div>
        <pre
          data-testid="config-json"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users scroll and select the JSON.
          tabIndex={0}
          className="max-h-56 overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-950"
        >
          {json}
        </pre>
      </figure>
    </div>
  );
}

/** The endpoint type choice: streamable HTTP (default) or SSE; the Groups page offers the same. */
export function EndpointTypeChoice({ value, onChange }: { value: EndpointType; onChange(value: EndpointType): void }) {
  const { t } = useTranslation('services');
  const id = useId();
  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium">{t('config.endpointType')}</legend>
      <RadioGroup value={value} onValueChange={(v) => onChange(v as EndpointType)}>
        {(['streamableHttp', 'sse'] as const).map((type) => (
          <div key={type} className="flex items-center gap-2">
            <RadioGroupItem id={`${id}-${type}`} value={type} />
            <Label htmlFor={`${id}-${type}`} className="font-normal">
              {t(`config.${type}`)}
            </Label>
          </div>
        ))}
      </RadioGroup>
    </fieldset>
  );
}
