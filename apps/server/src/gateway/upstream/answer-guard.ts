import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCErrorResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { responseIdOf } from './json-head.js';

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
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let eventType = '';
  let resumable = false;
  const dispatch = () => {
    const text = data.join('\n');
    const type = eventType;
    data = [];
    eventType = '';
    if (text === '' || (type !== '' && type !== 'message')) return;
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
  };
  const line = (raw: string) => {
    if (raw === '') return dispatch();
    if (raw.startsWith(':')) return;
    const colon = raw.indexOf(':');
    const field = colon === -1 ? raw : raw.slice(0, colon);
    let value = colon === -1 ? '' : raw.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventType = value;
    else if (field === 'id' && value !== '') resumable = true;
  };
  const reader = body.getReader();
  let broken: string | undefined;
  const lineEnd = /\r\n|\r|\n/g;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        // The CR held back in case an LF followed ends its line after all.
        if (buffer.endsWith('\r')) line(buffer.slice(0, -1));
        break;
      }
      // Only the new text is searched for line ends: a large event arriving in many chunks costs one pass.
      // A CR at the very end may be the first half of a CRLF, so it is looked at again with what follows.
      const scanned = Math.max(0, buffer.length - 1);
      buffer += decoder.decode(value, { stream: true });
      lineEnd.lastIndex = scanned;
      let start = 0;
      for (let m = lineEnd.exec(buffer); m !== null; m = lineEnd.exec(buffer)) {
        if (m[0] === '\r' && m.index === buffer.length - 1) break;
        line(buffer.slice(start, m.index));
        start = m.index + m[0].length;
      }
      if (start > 0) buffer = buffer.slice(start);
      // A line without its end that keeps growing is the SDK's problem as much as ours: bounded here.
      if (buffer.length > 16 * 1024 * 1024) buffer = buffer.slice(0, 1024);
    }
  } catch (err) {
    broken = err instanceof Error ? err.message : String(err);
  }
  // An event not closed by a blank line is incomplete and dropped, as the SDK's parser drops it.
  if (asked.size === 0 || resumable) return;
  const why = broken
    ? `the connection to the remote server broke before it answered (${broken})`
    : 'the remote server ended its answer stream without answering';
  for (const id of asked) deliver(errorFor(id, why));
}
