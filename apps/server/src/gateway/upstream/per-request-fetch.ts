import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

/**
 * The SDK client transports pass one long-lived AbortSignal to every fetch; undici then piles a
 * listener per request onto it (a peer gateway saw ~39,500). Here each request gets a controller
 * of its own, kept in `live` while the request and its body last; the channel aborts them all when
 * it closes, so nothing ever listens on the shared signal. Requests go out through `base` (the gateway's `remoteFetch`,
 * infra/outbound.ts): redirects only within the origin, addresses as AllowPrivateNetworkUpstreams says.
 * With `followSignal`, a caller that gives each request a signal of its own (modern-remote-channel.ts)
 * aborts that request with it; the SDK transports' shared signal is never followed.
 */
export function perRequestFetch(live: Set<AbortController>, base: FetchLike, followSignal = false): FetchLike {
  return async (url, init) => {
    const controller = new AbortController();
    if (init?.signal?.aborted) controller.abort(init.signal.reason);
    const outer = followSignal ? init?.signal : undefined;
    const abort = () => controller.abort(outer?.reason);
    outer?.addEventListener('abort', abort, { once: true });
    live.add(controller);
    const release = () => {
      live.delete(controller);
      outer?.removeEventListener('abort', abort);
    };
    let response: Response;
    try {
      response = await base(url, { ...init, signal: controller.signal });
    } catch (err) {
      release();
      throw err;
    }
    if (!response.body || NULL_BODY_STATUS.has(response.status)) {
      release();
      return response;
    }
    return new Response(untilEnd(response.body, release), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The same bytes, calling `done` once the body is read to its end, fails or is cancelled. */
function untilEnd(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          done();
          controller.close();
        } else {
          controller.enqueue(chunk.value);
        }
      } catch (err) {
        done();
        controller.error(err);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
}
