import { useQueryClient } from '@tanstack/react-query';
import { routes, type ServiceTool, type ToolCallResult } from '@toolport/contract';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Textarea } from '../../components/ui/textarea';
import { ApiError, call } from '../../lib/api';
import { refreshServices } from '../../lib/installed-services';

interface Property {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
}

const kindOf = (p: Property): 'string' | 'number' | 'boolean' | 'enum' | 'json' => {
  if (Array.isArray(p.enum)) return 'enum';
  const type = Array.isArray(p.type) ? p.type.find((t) => t !== 'null') : p.type;
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'string') return 'string';
  return 'json';
};

/** The arguments object from the form's text values; a field left empty is left out. */
export function argumentsOf(properties: Record<string, Property>, values: Record<string, string>): Record<string, unknown> | string {
  const args: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const raw = values[name] ?? '';
    if (raw === '') continue;
    const kind = kindOf(property);
    if (kind === 'number') args[name] = Number(raw);
    else if (kind === 'boolean') args[name] = raw === 'true';
    else if (kind === 'enum') args[name] = property.enum?.find((v) => String(v) === raw) ?? raw;
    else if (kind === 'json') {
      try {
        args[name] = JSON.parse(raw);
      } catch {
        return name;
      }
    } else args[name] = raw;
  }
  return args;
}

/** Try it: a form made from the tool's input schema, calling the tool through the gateway as the signed-in user. */
export function TryTool({ serviceId, tool }: { serviceId: number; tool: ServiceTool }) {
  const { t } = useTranslation('services');
  const properties = ((tool.input_schema.properties ?? {}) as Record<string, Property>) ?? {};
  const required = new Set(Array.isArray(tool.input_schema.required) ? (tool.input_schema.required as string[]) : []);
  const [values, setValues] = useState<Record<string, string>>({});
  const [result, setResult] = useState<ToolCallResult | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const formId = useId();
  const queryClient = useQueryClient();

  const run = async () => {
    const args = argumentsOf(properties, values);
    setResult(null);
    if (typeof args === 'string') return setFailure(t('try.invalidJson', { name: args }));
    setFailure(null);
    setBusy(true);
    try {
      setResult(
        await call(routes.services.callTool, {
          params: { id: serviceId, original_name: tool.original_name },
          body: { arguments: args },
          notify: false,
        }),
      );
    } catch (err) {
      setFailure(err instanceof ApiError || err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
      // The call counted against the caller's daily use: the card's usage bar moves now, not at the next refresh.
      void refreshServices(queryClient);
    }
  };

  return (
    <div className="mt-2 flex flex-col gap-2" data-testid="try-tool">
      {Object.entries(properties).map(([name, property]) => {
        const label = `${name}${required.has(name) ? ' *' : ''}`;
        const set = (value: string) => setValues((v) => ({ ...v, [name]: value }));
        const kind = kindOf(property);
        return (
          <div key={name} className="flex flex-col gap-1 text-xs">
            <label htmlFor={`${formId}-${name}`} className="font-mono">
              {label}
            </label>
            {kind === 'enum' || kind === 'boolean' ? (
              <select
                id={`${formId}-${name}`}
                className="h-8 rounded-md border border-slate-300 bg-transparent px-2 text-sm dark:border-slate-700"
                value={values[name] ?? ''}
                onChange={(e) => set(e.target.value)}
              >
                <option value="">—</option>
                {(kind === 'boolean' ? ['true', 'false'] : (property.enum ?? []).map(String)).map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            ) : kind === 'json' ? (
              <Textarea
                id={`${formId}-${name}`}
                rows={2}
                className="font-mono"
                placeholder="JSON"
                value={values[name] ?? ''}
                onChange={(e) => set(e.target.value)}
              />
            ) : (
              <Input
                id={`${formId}-${name}`}
                type={kind === 'number' ? 'number' : 'text'}
                value={values[name] ?? ''}
                onChange={(e) => set(e.target.value)}
              />
            )}
          </div>
        );
      })}
      <div>
        <Button size="sm" variant="secondary" disabled={busy} onClick={run}>
          {t('try.run')}
        </Button>
      </div>
      {failure && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          {failure}
        </p>
      )}
      {result && (
        <div data-testid="try-result" className="flex flex-col gap-1 text-sm">
          <p className={result.is_error ? 'text-red-600 dark:text-red-400' : 'text-slate-500'}>
            {result.is_error ? t('try.toolError', { ms: result.duration_ms }) : t('try.took', { ms: result.duration_ms })}
          </p>
          {result.content.map((block, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: content blocks have no identity of their own
            <ContentBlock key={i} block={block} />
          ))}
        </div>
      )}
    </div>
  );
}

function ContentBlock({ block }: { block: Record<string, unknown> }) {
  if (block.type === 'text')
    return <pre className="whitespace-pre-wrap rounded bg-slate-50 p-2 text-xs dark:bg-slate-900">{String(block.text)}</pre>;
  if (block.type === 'image' && typeof block.data === 'string') {
    return <img alt="" className="max-h-48 self-start" src={`data:${String(block.mimeType)};base64,${block.data}`} />;
  }
  return <pre className="overflow-x-auto rounded bg-slate-50 p-2 text-xs dark:bg-slate-900">{JSON.stringify(block, null, 2)}</pre>;
}
