import { useQueryClient } from '@tanstack/react-query';
import { routes, type ServiceTool, type ToolCallResult } from '@toolport/contract';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Textarea } from '../../components/ui/textarea';
import { ApiError, call } from '../../lib/api';
import { failureText } from '../../lib/failure';
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

/** The required fields of the schema left empty in the form, in the schema's order. */
export function missingRequired(
  properties: Record<string, Property>,
  required: ReadonlySet<string>,
  values: Record<string, string>,
): string[] {
  return Object.keys(properties).filter((name) => required.has(name) && (values[name] ?? '').trim() === '');
}

/**
 * An error result that is really a protocol error: the MCP SDK's servers answer a JSON-RPC error raised while
 * handling a call (arguments that fail the input schema, an unknown tool) as a result with isError and the
 * text "MCP error <code>: <message>". Null for an error of the tool's own.
 */
export function protocolErrorOf(result: ToolCallResult): { code: number; message: string } | null {
  if (!result.is_error || result.content.length !== 1) return null;
  const [block] = result.content;
  if (block?.type !== 'text' || typeof block.text !== 'string') return null;
  const match = /^MCP error (-?\d+): ([\s\S]*)$/.exec(block.text);
  return match ? { code: Number(match[1]), message: match[2] as string } : null;
}

/** Why a call did not give a result: a JSON-RPC error (code jsonrpc_error, decision 0058), or another failure. */
interface CallFailure {
  title: string;
  detail: string;
}

/**
 * Try it: a form made from the tool's input schema, calling the tool through the gateway as the signed-in user,
 * under the name clients see (its alias when it has one).
 */
export function TryTool({ serviceId, tool }: { serviceId: number; tool: ServiceTool }) {
  const { t } = useTranslation('services');
  const properties = ((tool.input_schema.properties ?? {}) as Record<string, Property>) ?? {};
  const required = new Set(Array.isArray(tool.input_schema.required) ? (tool.input_schema.required as string[]) : []);
  const [values, setValues] = useState<Record<string, string>>({});
  const [invalid, setInvalid] = useState<Record<string, string>>({});
  const [result, setResult] = useState<ToolCallResult | null>(null);
  const [failure, setFailure] = useState<CallFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const formId = useId();
  const queryClient = useQueryClient();
  const focusField = (name: string) => document.getElementById(`${formId}-${name}`)?.focus();

  const run = async () => {
    setResult(null);
    setFailure(null);
    // A required field left empty is said beside it; nothing is sent (issue 29).
    const missing = missingRequired(properties, required, values);
    const args = argumentsOf(properties, values);
    const errors: Record<string, string> = Object.fromEntries(missing.map((name) => [name, t('try.required', { name })]));
    if (typeof args === 'string') errors[args] = t('try.invalidJson', { name: args });
    setInvalid(errors);
    const first = Object.keys(properties).find((name) => name in errors);
    if (first !== undefined || typeof args === 'string') {
      if (first !== undefined) focusField(first);
      return;
    }
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
      if (err instanceof ApiError && err.code === 'daily_limit') {
        // The caller's own limit, in their language with the count and the limit (the server words it).
        setFailure({ title: t('try.limited'), detail: err.serverMessage ?? '' });
      } else if (err instanceof ApiError && err.code === 'jsonrpc_error') {
        const code = (err.data as { rpc_code?: unknown } | undefined)?.rpc_code;
        setFailure({ title: t('try.protocolError', { code: typeof code === 'number' ? code : '?' }), detail: err.serverMessage ?? '' });
      } else setFailure({ title: t('try.failed'), detail: failureText(err, t) });
    } finally {
      setBusy(false);
      // The call counted against the caller's daily use: the card's usage bar moves now, not at the next refresh.
      void refreshServices(queryClient);
    }
  };
  const protocol = result ? protocolErrorOf(result) : null;

  return (
    <div className="mt-2 flex flex-col gap-2" data-testid="try-tool">
      <p className="text-xs text-slate-600 dark:text-slate-400">
        {t('try.calls')}
        {/* A margin, not a space: none follows a Chinese colon. */}
        <span className="ml-1 font-mono font-semibold text-slate-900 dark:text-slate-100">{tool.name}</span>
        {tool.alias && <span className="font-mono"> · {t('tools.originalName', { name: tool.original_name })}</span>}
      </p>
      {Object.entries(properties).map(([name, property]) => {
        const label = `${name}${required.has(name) ? ' *' : ''}`;
        const set = (value: string) => {
          setValues((v) => ({ ...v, [name]: value }));
          setInvalid(({ [name]: _cleared, ...rest }) => rest);
        };
        const kind = kindOf(property);
        const error = invalid[name];
        const control = {
          id: `${formId}-${name}`,
          'aria-invalid': error ? true : undefined,
          'aria-describedby': error ? `${formId}-${name}-error` : undefined,
          'aria-required': required.has(name) || undefined,
        };
        return (
          <div key={name} className="flex flex-col gap-1 text-xs">
            <label htmlFor={`${formId}-${name}`} className="font-mono">
              {label}
            </label>
            {kind === 'enum' || kind === 'boolean' ? (
              <select
                {...control}
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
                {...control}
                rows={2}
                className="font-mono"
                placeholder="JSON"
                value={values[name] ?? ''}
                onChange={(e) => set(e.target.value)}
              />
            ) : (
              <Input
                {...control}
                type={kind === 'number' ? 'number' : 'text'}
                value={values[name] ?? ''}
                onChange={(e) => set(e.target.value)}
              />
            )}
            {error && (
              <p id={`${formId}-${name}-error`} role="alert" className="font-medium text-red-600 dark:text-red-400">
                {error}
              </p>
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
        <div role="alert" data-testid="try-failure" className="text-sm text-red-600 dark:text-red-400">
          <p className="font-medium">{failure.title}</p>
          {failure.detail && <p className="break-words whitespace-pre-wrap">{failure.detail}</p>}
        </div>
      )}
      {result && (
        <div data-testid="try-result" className="flex flex-col gap-1 text-sm">
          <p className={result.is_error ? 'font-medium text-red-600 dark:text-red-400' : 'text-slate-600 dark:text-slate-400'}>
            {protocol
              ? t('try.protocolErrorInResult', { code: protocol.code, ms: result.duration_ms })
              : result.is_error
                ? t('try.toolError', { ms: result.duration_ms })
                : t('try.took', { ms: result.duration_ms })}
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
