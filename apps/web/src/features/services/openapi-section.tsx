import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { CopyButton } from './copy-button';
import { openApiUrl, openWebUiConnection } from './endpoint-config';
import type { CopyProps } from './endpoint-section';

interface OpenApiSectionProps extends CopyProps {
  host: string;
  kind: 'proxy' | 'group';
  name: string;
  token: string | undefined;
}

/**
 * The OpenAPI face of a service or group (decision 0053): its URL, the document's, and the Open WebUI
 * connection to paste, each copyable. Shown in both Configure dialogs below the MCP client snippets.
 */
export function OpenApiSection({ host, kind, name, token, copy, copiedId }: OpenApiSectionProps) {
  const { t } = useTranslation('services');
  const id = useId();
  const url = openApiUrl(host, kind, name);
  const document = `${url}/openapi.json`;
  const connection = openWebUiConnection(url, token);
  return (
    <section aria-labelledby={`${id}-title`} className="space-y-3 border-t border-slate-200 pt-4 dark:border-slate-800">
      <div>
        <h3 id={`${id}-title`} className="text-sm font-medium">
          {t('config.openapi.title')}
        </h3>
        <p className="text-sm text-slate-600 dark:text-slate-400">{t('config.openapi.description')}</p>
      </div>
      {(
        [
          ['openapi-url', 'config.openapi.url', url],
          ['openapi-document', 'config.openapi.document', document],
        ] as const
      ).map(([copyId, label, value]) => (
        <div key={copyId} className="space-y-2">
          <Label htmlFor={`${id}-${copyId}`}>{t(label)}</Label>
          <div className="flex gap-2">
            <Input id={`${id}-${copyId}`} readOnly value={value} className="font-mono text-xs" onFocus={(e) => e.currentTarget.select()} />
            <CopyButton copied={copiedId === copyId} label={t(label)} onCopy={() => void copy(copyId, value, 'copy.urlCopied')} />
          </div>
        </div>
      ))}
      <figure aria-label={t('config.openapi.openWebUi')} className="space-y-2">
        <div className="flex items-start justify-between gap-2">
          <div>
            <p className="text-sm font-medium">{t('config.openapi.openWebUi')}</p>
            <p className="text-xs text-slate-600 dark:text-slate-400">{t('config.openapi.openWebUiHint')}</p>
          </div>
          <CopyButton
            copied={copiedId === 'openapi-openwebui'}
            label={t('config.openapi.openWebUi')}
            onCopy={() => void copy('openapi-openwebui', connection, 'copy.snippetCopied')}
          />
        </div>
        <pre
          data-testid="snippet-openwebui"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users scroll and select the snippet.
          tabIndex={0}
          className="max-h-48 overflow-auto whitespace-pre-wrap break-all rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-950"
        >
          {connection}
        </pre>
      </figure>
    </section>
  );
}
