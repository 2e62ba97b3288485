import type { JSONRPCError, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import { type Attributes, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { McpOutcome, Metrics } from '../../infra/metrics.js';
import type { Tracing } from '../../infra/tracing.js';
import type { ServiceSpec } from '../catalog.js';
import { COUNTED_METHODS } from '../meter.js';
import { outcomeOf, targetOf } from './metering-hook.js';

type Answer = JSONRPCResponse | JSONRPCError;

/**
 * Metrics and the trace of one proxied JSON-RPC request. Every path through the dispatcher ends
 * it exactly once: `answered` with the upstream's answer, or `end` where the gateway answers
 * itself (initialize, the daily limit, no upstream, a client that left).
 */
export interface ProxiedCall {
  /** The request is handed to the upstream link now: the child span starts. */
  sent(): void;
  answered(answer: Answer): void;
  end(outcome: McpOutcome, errorMessage?: string): void;
}

/** Nothing to measure or trace. */
export const NO_CALL: ProxiedCall = { sent() {}, answered() {}, end() {} };
const MAX_ERROR_TEXT = 500;

/** Attribute names of the OpenTelemetry MCP and RPC conventions (incubating, hence spelled out). */
const MCP_METHOD = 'mcp.method.name';
const SERVICE = 'toolport.service';

/** Span names stay low in cardinality: tools and prompts are named, resource URIs are only an attribute. */
function naming(request: JSONRPCRequest): { name: string; attributes: Attributes } {
  const target = targetOf(request);
  switch (request.method) {
    case 'tools/call':
      return { name: `tools/call ${target}`, attributes: { 'gen_ai.tool.name': target } };
    case 'prompts/get':
      return { name: `prompts/get ${target}`, attributes: { 'gen_ai.prompt.name': target } };
    case 'resources/read':
      return { name: 'resources/read', attributes: { 'mcp.resource.uri': target } };
    default:
      return { name: request.method, attributes: {} };
  }
}

class TracedCall implements ProxiedCall {
  private readonly started = performance.now();
  private readonly span: Span | undefined;
  private upstream: Span | undefined;
  private done = false;

  constructor(
    private readonly metrics: Metrics | undefined,
    private readonly tracing: Tracing | undefined,
    private readonly service: ServiceSpec,
    private readonly request: JSONRPCRequest,
  ) {
    if (!tracing?.enabled) return;
    const { name, attributes } = naming(request);
    this.span = tracing.start(name, {
      kind: SpanKind.SERVER,
      attributes: { [SERVICE]: service.name, [MCP_METHOD]: request.method, ...attributes },
    });
  }

  sent(): void {
    if (!this.span || !this.tracing || this.upstream) return;
    this.upstream = this.tracing.start(
      `upstream ${this.request.method}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { [SERVICE]: this.service.name, [MCP_METHOD]: this.request.method, 'toolport.upstream.type': this.service.type },
      },
      this.span,
    );
  }

  answered(answer: Answer): void {
    if (this.upstream) {
      if ('error' in answer) {
        this.upstream.setAttribute('rpc.jsonrpc.error_code', answer.error.code);
        this.upstream.setStatus({ code: SpanStatusCode.ERROR, message: answer.error.message.slice(0, MAX_ERROR_TEXT) });
      }
      this.upstream.end();
    }
    if ('error' in answer) this.span?.setAttribute('rpc.jsonrpc.error_code', answer.error.code);
    const { outcome, errorMessage } = outcomeOf(answer);
    this.end(outcome, errorMessage);
  }

  end(outcome: McpOutcome, errorMessage?: string): void {
    if (this.done) return;
    this.done = true;
    if (COUNTED_METHODS.has(this.request.method)) {
      this.metrics?.mcpRequest(this.service.name, this.request.method, outcome, (performance.now() - this.started) / 1000);
    }
    if (!this.span) return;
    this.span.setAttribute('toolport.outcome', outcome);
    if (outcome !== 'ok') {
      this.span.setAttribute('error.type', outcome);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: (errorMessage ?? outcome).slice(0, MAX_ERROR_TEXT) });
    }
    this.span.end();
  }
}

/** Where the dispatcher starts a ProxiedCall: a no-op for uncounted requests while tracing is off. */
export class CallTelemetry {
  constructor(
    private readonly metrics: Metrics | undefined,
    private readonly tracing: Tracing | undefined,
  ) {}

  begin(service: ServiceSpec, request: JSONRPCRequest): ProxiedCall {
    if (!this.tracing?.enabled && !COUNTED_METHODS.has(request.method)) return NO_CALL;
    return new TracedCall(this.metrics, this.tracing, service, request);
  }
}
