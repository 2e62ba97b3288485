import type { IncomingMessage } from 'node:http';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { BODY_LIMIT, isJsonContentType, readBody } from './http-io.js';
import { failures, type ProxyFailure } from './rpc-errors.js';

/** The SDK transport's cap on the number of messages in one batch. */
export const MAX_BATCH = 100;

export interface ParsedPost {
  messages: JSONRPCMessage[];
  batch: boolean;
  bytes: number;
}

/**
 * Reads and validates the body of a client POST: JSON content type (415), at most 4 MiB (413),
 * JSON (400, -32700), each element a JSON-RPC message by the SDK's schema (400, -32700).
 */
export async function readMessages(req: IncomingMessage): Promise<ParsedPost | ProxyFailure> {
  if (!isJsonContentType(req.headers['content-type'])) return failures.unsupportedMediaType();
  const body = await readBody(req);
  if (!body.ok) return failures.tooLarge(BODY_LIMIT);
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
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return failures.invalidMessage();
    // Forward the client's own object: validation must not reshape what reaches the upstream.
    messages.push(item as JSONRPCMessage);
  }
  return { messages, batch, bytes: body.bytes };
}
