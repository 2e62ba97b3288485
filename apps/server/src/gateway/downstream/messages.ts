import type { IncomingMessage } from 'node:http';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { BODY_DEADLINE_MS, BODY_LIMIT, bodyTimeout, isJsonContentType, readBody } from './http-io.js';
import { failures, type ProxyFailure } from './rpc-errors.js';

/** The SDK transport's cap on the number of messages in one batch. */
export const MAX_BATCH = 100;
/**
 * How deeply a message may nest. Deeper JSON parses but cannot be serialised again on its way upstream
 * (JSON.stringify overflows the stack near 10k levels), so it is refused here, found by fuzzing.
 */
export const MAX_DEPTH = 256;

export interface ParsedPost {
  messages: JSONRPCMessage[];
  batch: boolean;
  bytes: number;
}

/**
 * Reads and validates the body of a client POST: JSON content type (415), at most 4 MiB (413),
 * JSON (400, -32700), each element a JSON-RPC message by the SDK's schema (400, -32700).
 */
export async function readMessages(req: IncomingMessage, deadlineMs = BODY_DEADLINE_MS): Promise<ParsedPost | ProxyFailure> {
  if (!isJsonContentType(req.headers['content-type'])) return failures.unsupportedMediaType();
  const body = await readBody(req, BODY_LIMIT, deadlineMs);
  // A body that does not arrive in time (or whose client left) is answered 408 and the connection closed.
  if (!body.ok) return body.reason === 'too_large' ? failures.tooLarge(BODY_LIMIT) : bodyTimeout(req, deadlineMs);
  let raw: unknown;
  try {
    raw = JSON.parse(body.text);
  } catch {
    return failures.invalidJson();
  }
  const batch = Array.isArray(raw);
  const items: unknown[] = batch ? (raw as unknown[]) : [raw];
  if (items.length === 0) return failures.emptyBatch();
  if (items.length > MAX_BATCH) return failures.batchTooLarge(MAX_BATCH);
  if (deeperThan(raw, MAX_DEPTH)) return failures.tooDeep(MAX_DEPTH);
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return failures.invalidMessage();
    // Forward the client's own object: validation must not reshape what reaches the upstream.
    messages.push(item as JSONRPCMessage);
  }
  return { messages, batch, bytes: body.bytes };
}

/** Whether `value` nests arrays and objects more than `max` levels, walked without recursion. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
