import type { ServerOptions } from 'node:http';
import type { AbuseLimits } from '../config.js';

/** How often Node looks for requests past their headers or request timeout, at most. */
const TIMEOUT_CHECK_MS = 1000;

/**
 * The HTTP server's defences against slow clients (docs/operations.md, "Abuse limits"), as Fastify
 * options: a client must send its headers within HTTP_HEADERS_TIMEOUT_MS and its whole request within
 * HTTP_REQUEST_TIMEOUT_MS (slowloris), else Node answers 408 and closes the connection. Both count
 * only while a request is arriving: a response that streams for hours (an SSE stream) is not cut, nor
 * is an idle keep-alive connection (Fastify's keepAliveTimeout closes those). The proxy reads its
 * bodies within half the request time itself, to answer with a JSON-RPC error first (http-io.ts).
 */
export function httpServerOptions(limits: Pick<AbuseLimits, 'headersTimeoutMs' | 'requestTimeoutMs'>): {
  requestTimeout: number;
  http: ServerOptions;
} {
  return {
    // Fastify sets the server's requestTimeout from its own option after creating it.
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(TIMEOUT_CHECK_MS, Math.floor(limits.headersTimeoutMs / 4))),
    },
  };
}
