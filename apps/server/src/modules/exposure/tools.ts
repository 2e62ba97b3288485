import type { ServiceTool, ServiceTools, ToolOverrideRequest } from '@toolport/contract';
import { isAdminRole } from '@toolport/contract';
import type { ToolOverrideRow } from '../../db/schema.js';
import type { ServiceCatalog, ServiceSpec } from '../../gateway/catalog.js';
import { parseLimitMessage } from '../../gateway/meter.js';
import type { ListedTool, ToolOverride } from '../../gateway/tool-policy.js';
import { AppError, badRequest, forbidden, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import type { Locale } from '../../i18n/index.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { AccessLists } from './access.js';
import type { ExposureRepo } from './repo.js';

/** MCP tool names (2025-11-25 spec, "Tool names"): 1 to 128 of A–Z, a–z, 0–9, `_`, `-` and `.`. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The gateway's part the Tools tab needs: the live list through the caller's own link. */
export interface UpstreamTools {
  upstreamTools(serviceId: number, userId: number): Promise<ListedTool[]>;
  /** `locale`: the language of the gateway's own words in an error answer (a tool's own output is never translated). */
  callTool(serviceId: number, userId: number, name: string, args: Record<string, unknown>, locale?: Locale): Promise<ToolAnswer>;
}

type ToolAnswer = { result: Record<string, unknown> } | { error: { code: number; message: string } };

export const toOverride = (row: ToolOverrideRow): ToolOverride => ({
  originalName: row.original_name,
  enabled: row.enabled === 1,
  ...(row.alias !== null ? { alias: row.alias } : {}),
  ...(row.description !== null ? { description: row.description } : {}),
});

/**
 * Tool-level control per service (issue 17, item 3): the live list with the overrides applied, and
 * the overrides themselves. Overrides are stored by the tool's original name; the gateway applies
 * them wherever lists leave it (gateway/tool-policy.ts) and hears of changes by 'tools.changed'.
 */
export class ServiceToolsService {
  constructor(
    private readonly deps: {
      repo: ExposureRepo;
      catalog: Pick<ServiceCatalog, 'byId'>;
      gateway: UpstreamTools;
      access: AccessLists;
      events: ConfigEvents;
    },
  ) {}

  async overridesOf(service: Pick<ServiceSpec, 'name'>): Promise<ToolOverride[]> {
    return (await this.deps.repo.overridesOf(service.name)).map(toOverride);
  }

  private async service(id: number, caller: Principal): Promise<ServiceSpec> {
    const service = await this.deps.catalog.byId(id);
    if (!service) throw notFound('service.not_found');
    // Refused by id alone: the name of a service the caller may not use is not theirs to learn.
    if (!(await this.deps.access.mayUse(caller, 'service', id))) throw forbidden('access.no_access_service_id', { id });
    return service;
  }

  private async upstream(service: ServiceSpec, caller: Principal): Promise<ListedTool[]> {
    if (!service.enabled) throw new AppError(409, 'tools.service_disabled', { name: service.name });
    try {
      return await this.deps.gateway.upstreamTools(service.id, caller.id);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new AppError(502, 'tools.list_failed', { name: service.name, detail: detail.slice(0, 300) });
    }
  }

  /**
   * Try it: the tool called under the name clients see (its alias when it has one) through the
   * gateway as the caller, so overrides, limits and metering apply exactly as on /proxy.
   */
  async call(
    serviceId: number,
    originalName: string,
    args: Record<string, unknown>,
    caller: Principal,
    locale: Locale = 'en',
  ): Promise<TriedCall> {
    const service = await this.service(serviceId, caller);
    if (!service.enabled) throw new AppError(409, 'tools.service_disabled', { name: service.name });
    const override = (await this.overridesOf(service)).find((o) => o.originalName === originalName);
    if (override && !override.enabled) throw badRequest('tools.disabled', { name: originalName }, 'tool_disabled');
    const started = performance.now();
    const answer = await this.deps.gateway.callTool(service.id, caller.id, override?.alias ?? originalName, args, locale);
    const duration = Math.round((performance.now() - started) * 10) / 10;
    if ('error' in answer) {
      // Over the caller's daily limit: said in the caller's language, with the count and the limit.
      const daily = parseLimitMessage(answer.error.message);
      if (daily) {
        throw new AppError(
          429,
          'tools.daily_limit',
          { name: service.name, ...daily },
          { code: 'daily_limit', data: { rpc_code: answer.error.code } },
        );
      }
      const limited = answer.error.message.startsWith('daily request limit exceeded');
      // Said as a protocol error, not as a tool's answer: the call never reached a result (decision 0058).
      throw new AppError(
        limited ? 429 : 502,
        'tools.call_failed',
        { name: originalName, detail: answer.error.message.slice(0, 500) },
        { code: 'jsonrpc_error', data: { rpc_code: answer.error.code } },
      );
    }
    const result = answer.result;
    return {
      is_error: result.isError === true,
      content: Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [],
      ...(result.structuredContent !== undefined ? { structured_content: result.structuredContent } : {}),
      duration_ms: duration,
    };
  }

  async list(serviceId: number, caller: Principal): Promise<ServiceTools> {
    const service = await this.service(serviceId, caller);
    const [tools, overrides] = await Promise.all([this.upstream(service, caller), this.overridesOf(service)]);
    const shown = present(tools, overrides);
    const admin = isAdminRole(caller.role);
    return {
      tools: admin ? shown.tools : shown.tools.filter((t) => t.enabled),
      total: shown.tools.length,
      dormant: admin ? shown.dormant : [],
    };
  }

  /** Validates against the live list (the tool must exist, an alias must be a free, valid tool name). */
  async set(serviceId: number, originalName: string, patch: ToolOverrideRequest, caller: Principal): Promise<ServiceTools> {
    const service = await this.service(serviceId, caller);
    const [tools, overrides] = await Promise.all([this.upstream(service, caller), this.overridesOf(service)]);
    const known = tools.some((t) => t.name === originalName) || overrides.some((o) => o.originalName === originalName);
    if (!known) throw badRequest('tools.unknown_tool', { name: originalName, service: service.name }, 'unknown_tool');
    let alias = patch.alias;
    if (typeof alias === 'string') {
      alias = alias.trim();
      if (alias === '' || alias === originalName) alias = null;
      else if (!TOOL_NAME.test(alias)) throw badRequest('tools.alias_invalid', { alias }, 'alias_invalid');
      else {
        // Taken by another tool's visible name: its own name (unless aliased away) or its alias.
        const others = present(tools, overrides).tools.filter((t) => t.original_name !== originalName);
        const taken = others.find((t) => t.name === alias || (t.original_name === alias && t.alias === null));
        if (taken) throw badRequest('tools.alias_taken', { alias, tool: taken.original_name }, 'alias_taken');
      }
    }
    await this.deps.repo.patchOverride(service.name, originalName, {
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      ...(alias !== undefined ? { alias } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
    });
    this.deps.events.emit({ type: 'tools.changed', serviceId: service.id });
    return present(tools, await this.overridesOf(service));
  }
}

export interface TriedCall {
  is_error: boolean;
  content: Record<string, unknown>[];
  structured_content?: unknown;
  duration_ms: number;
}

function present(tools: ListedTool[], overrides: ToolOverride[]): ServiceTools {
  const byName = new Map(overrides.map((o) => [o.originalName, o]));
  const listed = new Set<string>();
  const out: ServiceTool[] = tools.map((tool) => {
    listed.add(tool.name);
    const o = byName.get(tool.name);
    const original = typeof tool.description === 'string' ? tool.description : '';
    const schema = tool.inputSchema;
    return {
      name: o?.alias ?? tool.name,
      original_name: tool.name,
      enabled: o ? o.enabled : true,
      description: o?.description ?? original,
      original_description: original,
      alias: o?.alias ?? null,
      input_schema: typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>) : { type: 'object' },
    };
  });
  return { tools: out, total: out.length, dormant: overrides.filter((o) => !listed.has(o.originalName)).map((o) => o.originalName) };
}
