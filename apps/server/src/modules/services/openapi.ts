import type { CustomServiceRequest, OpenApiToolPreview } from '@toolport/contract';
import { compileDocument, OpenApiError, parseDocument } from '../../gateway/openapi/compile.js';
import { fetchDocument } from '../../gateway/openapi/fetch-document.js';
import type { OpenApiPlan } from '../../gateway/openapi/plan.js';
import { badRequest } from '../../http/errors.js';
import { OutboundError, type RemoteAddresses } from '../../infra/outbound.js';
import { checkedRemoteAddress, checkedUrl } from './custom.js';

/**
 * An OpenAPI service's document, fetched (under the address preference) or as uploaded, checked and
 * compiled into its plan (gateway/openapi/compile.ts); every refusal a localised 400 naming the problem.
 */
export async function compileOpenApi(req: CustomServiceRequest, remote: RemoteAddresses): Promise<OpenApiPlan> {
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
    if (override) checkedUrl(override);
    const plan = await compileDocument({
      data: parseDocument(text),
      sourceUrl,
      document: sourceUrl ? '' : uploaded,
      baseUrl: override,
      filter: req.operation_filter ?? {},
    });
    // Requests go to the base URL: it passes the address preference as a remote service's URL does.
    await checkedRemoteAddress(plan.baseUrl, remote);
    return plan;
  } catch (err) {
    if (err instanceof OutboundError) throw badRequest(err.key, err.params, 'address_refused');
    if (err instanceof OpenApiError) throw badRequest(err.key, err.params, 'openapi_refused');
    throw err;
  }
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
