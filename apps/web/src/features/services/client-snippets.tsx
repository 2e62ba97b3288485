import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '../../components/ui/tabs';
import { CopyButton } from './copy-button';
import { type ClientId, clientIds, clientSnippet, type EndpointType } from './endpoint-config';
import type { CopyProps } from './endpoint-section';

interface ClientSnippetsProps extends CopyProps {
  name: string;
  url: string;
  type: EndpointType;
  token: string | undefined;
}

/** Ready configurations for Claude Desktop, Cursor, VS Code, Claude Code, Windsurf and Cherry Studio, each copyable. */
export function ClientSnippets({ name, url, type, token, copy, copiedId }: ClientSnippetsProps) {
  const { t } = useTranslation('services');
  const id = useId();
  const [client, setClient] = useState<ClientId>('claudeDesktop');
  return (
    <section aria-labelledby={`${id}-title`} className="space-y-2 border-t border-slate-200 pt-4 dark:border-slate-800">
      <div>
        <h3 id={`${id}-title`} className="text-sm font-medium">
          {t('config.clients')}
        </h3>
        <p className="text-sm text-slate-600 dark:text-slate-400">{t('config.clientsDescription')}</p>
      </div>
      <Tabs value={client} onValueChange={(value) => setClient(value as ClientId)}>
        <TabsList aria-label={t('config.clients')}>
          {clientIds.map((c) => (
            <TabsTrigger key={c} value={c}>
              {t(`config.clientNames.${c}`)}
            </TabsTrigger>
          ))}
        </TabsList>
        {clientIds.map((c) => {
          const snippet = clientSnippet(c, name, url, type, token);
          const clientName = t(`config.clientNames.${c}`);
          return (
            <TabsContent key={c} value={c} className="mt-2 space-y-2">
              <figure aria-label={t('config.snippet', { client: clientName })} className="space-y-2">
                <div className="flex items-start justify-between gap-2">
                  <p className="text-xs text-slate-600 dark:text-slate-400">{t(`config.clientHints.${c}`)}</p>
                  <CopyButton
                    copied={copiedId === `client-${c}`}
                    label={t('config.snippet', { client: clientName })}
                    onCopy={() => void copy(`client-${c}`, snippet.text, 'copy.snippetCopied')}
                  />
                </div>
                <pre
                  data-testid={`snippet-${c}`}
                  // biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users scroll and select the snippet.
                  tabIndex={0}
                  className="max-h-48 overflow-auto whitespace-pre-wrap break-all rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-950"
                >
                  {snippet.text}
                </pre>
              </figure>
            </TabsContent>
          );
        })}
      </Tabs>
    </section>
  );
}
