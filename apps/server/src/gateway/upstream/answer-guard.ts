import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCErrorResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { responseIdOf } from './json-head.js';
import { readSseEvents } from './sse-events.js';

/** The error a request gets when a remote server's answer to it broke. */
export const BROKEN_ANSWER_CODE = -32000;

type Deliver = (message: JSONRPCErrorResponse) => void;

const errorFor = (id: RequestId, message: string): JSONRPCErrorResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code: BROKEN_ANSWER_CODE, message },
});

/** The ids of the requests in a POST body (one message or a batch); empty for anything else. */
function requestIds(body: unknown): Set<RequestId> {
  const ids = new Set<RequestId>();
  if (typeof body !== 'string') return ids;
  try {
    const parsed = JSON.parse(body) as unknown;
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      const msg = m as { id?: unknown; method?: unknown };
      if (typeof msg?.method === 'string' && (typeof msg.id === 'number' || typeof msg.id === 'string')) ids.add(msg.id);
    }
  } catch {
    // Not ours to judge.
  }
  return ids;
}

/**
 * Watches the SSE streams a remote upstream answers with, beside the SDK transport that reads the
 * same bytes (a tee), so a broken answer becomes an error for the request it belonged to at once
 * instead of a wait for the call timeout:
 * - an event whose data is not valid JSON but names a request id: that request fails ("not valid JSON");
 * - a POST's stream that ends, or breaks (connection reset), before answering each of its requests:
 *   those requests fail — unless the server gave the stream event ids, which makes it resumable and
 *   the SDK reconnects for the answer (the call timeout still bounds that).
 * Plain JSON answers need nothing here: the SDK fails the send itself when one is broken.
 */
export function answerGuard(base: FetchLike, deliver: Deliver): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    const type = response.headers.get('content-type') ?? '';
    if (!response.body || !response.ok || !/^text\/event-stream/i.test(type)) return response;
    const asked = init?.method === 'POST' ? requestIds(init.body) : new Set<RequestId>();
    const [forSdk, forGuard] = response.body.tee();
    void watch(forGuard, asked, deliver);
    return new Response(forSdk, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

async function watch(body: ReadableStream<Uint8Array>, asked: Set<RequestId>, deliver: Deliver): Promise<void> {
  const { resumable, broken } = await readSseEvents(body, ({ event, data: text }) => {
    if (event !== '' && event !== 'message') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      const id = responseIdOf(text);
      if (id === undefined || (asked.size > 0 && !asked.has(id))) return;
      asked.delete(id);
      deliver(errorFor(id, 'the remote server sent an answer that is not valid JSON'));
      return;
    }
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      const msg = m as { id?: RequestId; method?: unknown };
      if (msg && msg.method === undefined && msg.id !== undefined) asked.delete(msg.id);
    }
  });
  // An event not closed by a blank line is incomplete and dropped, as the SDK's parser drops it.
  if (asked.size === 0 || resumable) return;
  const why = broken
    ? `the connection to the remote server broke before it answered (${broken})`
    : 'the remote server ended its answer stream without answering';
  for (const id of asked) deliver(errorFor(id, why));
}
