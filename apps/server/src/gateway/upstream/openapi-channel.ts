import type { JSONRPCMessage, JSONRPCRequest, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { FetchLike } from '../../infra/outbound.js';
import { VERSION } from '../../version.js';
import type { ServiceSpec } from '../catalog.js';
import { type CallSetup, callOperation } from '../openapi/call.js';
import type { OpenApiPlan } from '../openapi/plan.js';
import type { Channel } from './channel.js';
import { negotiateVersion } from './handshake.js';

/**
 * An OpenAPI service (docs/openapi.md) as an MCP server in the gateway's own process: `initialize`,
 * `tools/list` (one tool per compiled operation) and `tools/call` (one REST request, under the outbound
 * rules of remote services) answered here, so the link above it, and everything above the link (groups,
 * discovery, overrides, access, limits, metering), treats it as any other upstream.
 */
export class OpenApiChannel implements Channel {
  onmessage: (message: JSONRPCMessage) => void = () => undefined;
  onclose: (reason: string) => void = () => undefined;
  private closed = false;
  /** Calls in flight by request id: `notifications/cancelled` and close abort them. */
  private readonly live = new Map<string | number, AbortController>();
  private readonly tools: Tool[];

  private constructor(
    private readonly plan: OpenApiPlan,
    private readonly setup: CallSetup,
    private readonly logger: Logger,
  ) {
    this.tools = plan.operations.map((op) => ({
      name: op.name,
      description: op.description,
      inputSchema: op.inputSchema as Tool['inputSchema'],
    }));
  }

  /**
   * Opens once the base URL answers at all (any HTTP status: the API is there), within `timeoutMs`;
   * a refused address or no answer fails the opening, as a remote server that does not answer does.
   */
  static async open(
    spec: ServiceSpec,
    logger: Logger,
    timeoutMs: number,
    userEnv: Record<string, string> | undefined,
    remoteFetch: FetchLike,
  ): Promise<OpenApiChannel> {
    const plan = spec.openapi;
    if (!plan) throw new Error('the service has no compiled OpenAPI document; add it again');
    const setup: CallSetup = { baseUrl: plan.baseUrl, headers: spec.headers, variables: { ...spec.env, ...userEnv }, fetch: remoteFetch };
    let response: Response;
    try {
      response = await remoteFetch(plan.baseUrl, { method: 'HEAD', headers: spec.headers, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const reason = err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : err.message) : String(err);
      throw new Error(`the base URL ${plan.baseUrl} does not answer: ${reason}`);
    }
    await response.body?.cancel().catch(() => undefined);
    return new OpenApiChannel(plan, setup, logger);
  }

  send(message: JSONRPCMessage): void {
    if (this.closed) return;
    if (!('method' in message)) return; // answers to requests of ours: we send none
    if (!('id' in message)) {
      if (message.method === 'notifications/cancelled') {
        const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
        if (id !== undefined) this.live.get(id)?.abort();
      }
      return;
    }
    void this.answer(message as JSONRPCRequest);
  }

  private async answer(request: JSONRPCRequest): Promise<void> {
    let reply: JSONRPCMessage;
    try {
      const result = await this.result(request);
      reply =
        result === undefined
          ? { jsonrpc: '2.0', id: request.id, error: { code: -32601, message: `Method not found: ${request.method}` } }
          : { jsonrpc: '2.0', id: request.id, result };
    } catch (err) {
      this.logger.debug({ err }, 'openapi channel request failed');
      reply = { jsonrpc: '2.0', id: request.id, error: { code: -32603, message: err instanceof Error ? err.message : String(err) } };
    }
    if (this.closed) return;
    try {
      this.onmessage(reply);
    } catch (err) {
      this.logger.error({ err }, 'upstream message handler failed');
    }
  }

  private async result(request: JSONRPCRequest): Promise<Record<string, unknown> | undefined> {
    const params = (request.params ?? {}) as Record<string, unknown>;
    switch (request.method) {
      case 'initialize':
        return {
          protocolVersion: negotiateVersion(typeof params.protocolVersion === 'string' ? params.protocolVersion : undefined),
          capabilities: { tools: {} },
          serverInfo: { name: this.plan.title || 'openapi', version: this.plan.version || VERSION },
          instructions: `REST API ${this.plan.title} at ${this.plan.baseUrl}, ${this.plan.operations.length} operations.`,
        };
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: this.tools };
      case 'tools/call':
        return this.call(request.id, params);
      default:
        return undefined;
    }
  }

  private async call(id: string | number, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const op = this.plan.operations.find((o) => o.name === params.name);
    if (!op) throw new Error(`Unknown tool: ${String(params.name)}`);
    const args = typeof params.arguments === 'object' && params.arguments !== null ? (params.arguments as Record<string, unknown>) : {};
    const controller = new AbortController();
    this.live.set(id, controller);
    try {
      return (await callOperation(op, args, this.setup, controller.signal)) as Record<string, unknown>;
    } finally {
      this.live.delete(id);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.live.values()) controller.abort();
    this.live.clear();
  }
}
