import type { JSONRPCError, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceSpec } from '../catalog.js';
import { COUNTED_METHODS, limitMessage, type Meter, type RequestOutcome } from '../meter.js';
import { RpcCode, rpcErrorJson } from './rpc-errors.js';

const MAX_ERROR_TEXT = 500;

export const isCounted = (request: JSONRPCRequest): boolean => COUNTED_METHODS.has(request.method);

/** What a counted request is about: the tool, the resource URI or the prompt. */
export function targetOf(request: JSONRPCRequest): string {
  const params = request.params as Record<string, unknown> | undefined;
  const value = request.method === 'resources/read' ? params?.uri : params?.name;
  return typeof value === 'string' ? value.slice(0, 500) : '';
}

/** A JSON-RPC error, or a tool result flagged `isError`, counts as a failed call. */
export function outcomeOf(message: JSONRPCResponse | JSONRPCError): Pick<RequestOutcome, 'outcome' | 'errorMessage'> {
  if ('error' in message) return { outcome: 'error', errorMessage: message.error.message.slice(0, MAX_ERROR_TEXT) };
  const result = message.result as { isError?: unknown; content?: unknown } | undefined;
  if (result?.isError !== true) return { outcome: 'ok' };
  const first = Array.isArray(result.content) ? (result.content[0] as { type?: unknown; text?: unknown } | undefined) : undefined;
  const text = first?.type === 'text' && typeof first.text === 'string' ? first.text : 'tool reported an error';
  return { outcome: 'error', errorMessage: text.slice(0, MAX_ERROR_TEXT) };
}

/**
 * The metering hook of one counted request (docs/architecture.md §6): admission before the upstream is
 * contacted, one record afterwards with latency, outcome, bytes and target.
 */
export class MeteredCall {
  private readonly started = performance.now();
  private done = false;

  constructor(
    private readonly meter: Meter,
    private readonly service: ServiceSpec,
    private readonly userId: number,
    private readonly request: JSONRPCRequest,
    private readonly bytesIn: number,
  ) {}

  /** Reserves the request against `rpd_limit`; when refused returns the JSON-RPC error to answer with. */
  async admit(): Promise<string | undefined> {
    const admission = await this.meter.admit(this.service, this.userId);
    if (admission.allowed) return undefined;
    const message = limitMessage(admission.count, admission.limit);
    const json = rpcErrorJson(this.request.id, RpcCode.ServerError, message);
    this.write({ outcome: 'limited', errorMessage: message }, Buffer.byteLength(json));
    return json;
  }

  answered(message: JSONRPCResponse | JSONRPCError, bytesOut: number): void {
    this.write(outcomeOf(message), bytesOut);
  }

  abandoned(reason: string): void {
    this.write({ outcome: 'error', errorMessage: reason }, 0);
  }

  private write(outcome: Pick<RequestOutcome, 'outcome' | 'errorMessage'>, bytesOut: number): void {
    if (this.done) return;
    this.done = true;
    this.meter.record({
      serviceId: this.service.id,
      userId: this.userId,
      method: this.request.method,
      target: targetOf(this.request),
      latencyMs: Math.round(performance.now() - this.started),
      bytesIn: this.bytesIn,
      bytesOut,
      ...outcome,
    });
  }
}
