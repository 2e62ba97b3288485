import { type FetchLike, OutboundError } from '../../infra/outbound.js';
import { MAX_DOCUMENT_BYTES, OpenApiError } from './compile.js';
import { readCapped } from './read-capped.js';

const FETCH_TIMEOUT_MS = 15_000;

/**
 * The text of a document at `url`, fetched under the outbound rules of remote services (infra/outbound.ts:
 * the address preference, redirects within the origin), within FETCH_TIMEOUT_MS and MAX_DOCUMENT_BYTES.
 * A refused address is thrown as the OutboundError it is; every other failure as an OpenApiError.
 */
export async function fetchDocument(url: URL, remoteFetch: FetchLike): Promise<string> {
  const shown = `${url.origin}${url.pathname}`.slice(0, 300);
  let response: Response;
  try {
    response = await remoteFetch(url, {
      headers: { accept: 'application/json, application/yaml, text/yaml, */*;q=0.5' },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    if (err instanceof OutboundError) throw err;
    const reason =
      err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${FETCH_TIMEOUT_MS} ms` : err.message) : String(err);
    throw new OpenApiError('openapi_service.fetch_failed', { url: shown }, reason);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new OpenApiError('openapi_service.fetch_status', { url: shown, status: response.status });
  }
  let bytes: Buffer | undefined;
  try {
    bytes = await readCapped(response, MAX_DOCUMENT_BYTES);
  } catch (err) {
    throw new OpenApiError('openapi_service.fetch_failed', { url: shown }, err instanceof Error ? err.message : String(err));
  }
  if (!bytes) throw new OpenApiError('openapi_service.too_large', { max: MAX_DOCUMENT_BYTES });
  return bytes.toString('utf8');
}
