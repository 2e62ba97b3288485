import type { CustomServiceRequest, OpenApiToolPreview } from '@toolport/contract';
import { compileDocument, OpenApiError, parseDocument } from '../../gateway/openapi/compile.js';
import { fetchDocument } from '../../gateway/openapi/fetch-document.js';
import type { OpenApiPlan, OperationFilter } from '../../gateway/openapi/plan.js';
import { badRequest, inField } from '../../http/errors.js';
import { OutboundError, type RemoteAddresses } from '../../infra/outbound.js';
import { checkedRemoteAddress, checkedUrl } from './custom.js';

/** Where an OpenAPI service's document comes from and what is kept of it: a create's fields, or an edit's. */
export type OpenApiSource = Pick<CustomServiceRequest, 'url' | 'document' | 'base_url' | 'operation_filter'>;

/** The request's field a refusal of the document's base URL or of its filter is the fault of (decision 0058). */
const FIELD_OF_KEY: Record<string, 'base_url' | 'operation_filter'> = {
  'openapi_service.no_base_url': 'base_url',
  'openapi_service.base_url_invalid': 'base_url',
  'openapi_service.no_operations_after_filter': 'operation_filter',
};

/**
 * An OpenAPI service's document, fetched (under the address preference) or as uploaded, checked and
 * compiled into its plan (gateway/openapi/compile.ts); every refusal a localised 400 naming the problem, and the
 * field it is the fault of when it is the base URL's or the filter's (the rest are the document's).
 */
export async function compileOpenApi(req: OpenApiSource, remote: RemoteAddresses): Promise<OpenApiPlan> {
  try {
    const uploaded = req.document ?? '';
    let text = uploaded;
    let sourceUrl = '';
    if (!uploaded.trim()) {
      if (!req.url.trim()) throw badRequest('openapi_service.source_required');
      const url = checkedUrl(req.url);
      await checkedRemoteAddress(url.toString(), remote);
      sourceUrl = url.toString();
      text = await fetchDocument(url, remote.fetch);
    }
    const override = req.base_url?.trim() ?? '';
    if (override) inField('base_url', () => checkedUrl(override));
    const plan = await compileDocument({
      data: parseDocument(text),
      sourceUrl,
      document: sourceUrl ? '' : uploaded,
      baseUrl: override,
      filter: req.operation_filter ?? {},
    });
    // Requests go to the base URL: it passes the address preference as a remote service's URL does.
    await inField('base_url', () => checkedRemoteAddress(plan.baseUrl, remote));
    return plan;
  } catch (err) {
    if (err instanceof OutboundError) throw badRequest(err.key, err.params, 'address_refused');
    if (err instanceof OpenApiError) {
      const refused = badRequest(err.key, err.params, 'openapi_refused');
      const field = FIELD_OF_KEY[err.key];
      throw field ? refused.inField(field) : refused;
    }
    throw err;
  }
}

/** A filter as it decides: empty lists are no lists (both keep every operation). */
function filterKey(filter: OperationFilter | undefined): string {
  const f = filter ?? {};
  return JSON.stringify(
    (['tags', 'paths', 'operation_ids'] as const).map((k) => (f[k]?.length ? [...(f[k] ?? [])].map((v) => v.trim()) : [])),
  );
}

/**
 * An edit of an OpenAPI service (`PUT /mcp_services/{id}`): the document's URL (`command`), a new uploaded
 * `document`, the base URL override or the filter. When any differs from the stored plan, the document is read
 * again (fetched from its URL, or the uploaded text) and compiled with the new settings, under the same checks
 * as a create; undefined when the edit changes none of them.
 */
export async function recompiledOpenApi(
  stored: OpenApiPlan,
  edit: { command?: string; document?: string; base_url?: string; operation_filter?: OperationFilter },
  remote: RemoteAddresses,
): Promise<OpenApiPlan | undefined> {
  if (edit.command === undefined && edit.document === undefined && edit.base_url === undefined && edit.operation_filter === undefined)
    return undefined;
  const uploaded = edit.document?.trim() ? edit.document : undefined;
  // A new upload replaces the URL; an empty URL keeps the uploaded document there is.
  const url = uploaded ? '' : (edit.command ?? stored.sourceUrl).trim();
  const document = uploaded ?? (url ? '' : stored.document);
  const previousOverride = stored.baseUrlOverride ?? '';
  const baseUrl = (edit.base_url ?? previousOverride).trim();
  const filter = edit.operation_filter ?? stored.filter;
  const unchanged =
    !uploaded &&
    url === stored.sourceUrl &&
    (url !== '' || document === stored.document) &&
    baseUrl === previousOverride &&
    filterKey(filter) === filterKey(stored.filter);
  if (unchanged) return undefined;
  return compileOpenApi({ url, document, base_url: baseUrl, operation_filter: filter }, remote);
}

/** The tools a plan makes, as a preview shows them. */
export function previewTools(plan: OpenApiPlan): OpenApiToolPreview[] {
  return plan.operations.map((op) => ({
    name: op.name,
    description: op.description,
    method: op.method,
    path: op.path,
    input_schema: op.inputSchema,
  }));
}
