import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * One live connection to a tool server, whatever carries it: a child process's stdin/stdout or an
 * SDK client transport. The link above it speaks JSON-RPC and never knows which.
 */
export interface Channel {
  /**
   * Stdio writes at once, or resolves once a process behind on its input takes it; remote transports resolve once
   * the POST is accepted. `headers`: extra HTTP headers
   * for this message (a modern request's `Mcp-Param-*`), where the channel has HTTP requests; others ignore them.
   */
  send(message: JSONRPCMessage, headers?: Record<string, string>): void | Promise<void>;
  /** Ends the connection and, for a process, its whole process group. Never rejects. */
  close(): Promise<void>;
  onmessage: (message: JSONRPCMessage) => void;
  /** The connection ended without close() being called: the process exited, the stream was lost. */
  onclose: (reason: string) => void;
  /** Only streamable HTTP needs the negotiated version on every later request. */
  setProtocolVersion?(version: string): void;
}

/** The remote upstream forgot our session (404, or 400 naming the session): re-initialise and retry once. */
export class SessionLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionLostError';
  }
}

/**
 * An error's message, with its cause when the message alone hides it: fetch's "fetch failed" carries the
 * connect error (`connect ECONNREFUSED 127.0.0.1:9`) only in `cause`.
 */
export const errorText = (err: unknown): string => {
  if (!(err instanceof Error)) return String(err);
  const cause = causeText(err.cause);
  return cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
};

function causeText(cause: unknown): string {
  if (!(cause instanceof Error)) return '';
  if (cause.message) return cause.message;
  // Several addresses tried (localhost as ::1 and 127.0.0.1): an AggregateError without a message of its own.
  const inner = cause instanceof AggregateError ? cause.errors.map(causeText).filter(Boolean) : [];
  return inner.length ? inner.join('; ') : ((cause as { code?: string }).code ?? '');
}
