import type { GatewayUser, ServiceSpec } from './catalog.js';

/**
 * What the gateway asks modules about tools and access (issue 17; docs/architecture.md §10): the gateway
 * never reads the tables behind these answers itself. The module that implements this port caches
 * its answers and drops them on 'tools.changed' and 'access.changed' events.
 */
export interface ToolOverride {
  /** The tool's name upstream: overrides survive re-installs and upgrades by it. */
  originalName: string;
  enabled: boolean;
  /** The name clients see instead; undefined keeps the original. */
  alias?: string;
  /** The description clients see instead; undefined keeps the upstream's. */
  description?: string;
}

/** Who asks, as far as access goes: the user and their role (admins always may). */
export type AccessCaller = Pick<GatewayUser, 'id' | 'role'>;

export interface ToolPolicy {
  /** The overrides of a service's tools; an empty list when none is set. */
  overrides(service: Pick<ServiceSpec, 'id' | 'name'>): Promise<ToolOverride[]>;
  /**
   * Whether the user may use the service (admins always may). The one rule of every door to a service
   * (docs/decisions/0040): `/proxy`, each member of a group (in both modes and both protocol eras), and the
   * endpoints an OAuth token may be bound to ask this and nothing else.
   */
  mayUseService(user: AccessCaller, serviceId: number): Promise<boolean>;
}

/** No overrides and open access: what the gateway does when no module answers (unit tests). */
export const OPEN_POLICY: ToolPolicy = {
  overrides: async () => [],
  mayUseService: async () => true,
};

export interface ListedTool {
  name: string;
  description?: string;
  [key: string]: unknown;
}

/** A tools/call name resolved against the overrides: the upstream's name, or why it is refused. */
export type ResolvedCall = { name: string } | { refused: string };

/**
 * A service's overrides applied to what leaves the gateway: `tools/list` results are rewritten
 * (disabled tools left out, aliases and descriptions put in) and `tools/call` names mapped back to
 * the upstream's. Built once per overrides list; both directions are map look-ups.
 */
export class ToolOverrides {
  static readonly NONE = new ToolOverrides([]);
  private readonly byOriginal = new Map<string, ToolOverride>();
  /** Client-visible alias → original name. */
  private readonly byAlias = new Map<string, string>();

  constructor(overrides: readonly ToolOverride[]) {
    for (const o of overrides) {
      this.byOriginal.set(o.originalName, o);
      if (o.alias) this.byAlias.set(o.alias, o.originalName);
    }
  }

  get empty(): boolean {
    return this.byOriginal.size === 0;
  }

  /** The list as clients see it; the tools' other fields (schemas, annotations) are kept as they are. */
  applyToList<T extends ListedTool>(tools: readonly T[]): T[] {
    if (this.empty) return [...tools];
    const out: T[] = [];
    for (const tool of tools) {
      const o = this.byOriginal.get(tool.name);
      if (!o) {
        // A tool whose own name is now another tool's alias would be unreachable: the alias wins.
        if (!this.byAlias.has(tool.name)) out.push(tool);
        continue;
      }
      if (!o.enabled) continue;
      out.push({ ...tool, name: o.alias ?? tool.name, ...(o.description !== undefined ? { description: o.description } : {}) });
    }
    return out;
  }

  /** The upstream's name for a name a client called, or a refusal naming the tool. */
  resolveCall(name: string): ResolvedCall {
    if (this.empty) return { name };
    const aliased = this.byAlias.get(name);
    const original = aliased ?? name;
    const o = this.byOriginal.get(original);
    if (!aliased && o?.alias) return { refused: `Unknown tool: ${name}` };
    if (o && !o.enabled) return { refused: `Tool ${name} is disabled on this gateway` };
    return { name: original };
  }
}

const OVERRIDES_CACHE_MS = 5000;

/**
 * The overrides per service as the dispatcher reads them on every tools/list and tools/call: kept
 * in memory (a call pays a map look-up, not a query), dropped on 'tools.changed' (which also reaches
 * other replicas) and re-read after a few seconds at most in case an event was missed.
 */
export class OverridesCache {
  private readonly entries = new Map<number, { at: number; value: Promise<ToolOverrides> }>();

  constructor(private readonly policy: ToolPolicy) {}

  forService(service: Pick<ServiceSpec, 'id' | 'name'>): Promise<ToolOverrides> {
    const serviceId = service.id;
    const now = Date.now();
    const hit = this.entries.get(serviceId);
    if (hit && now - hit.at < OVERRIDES_CACHE_MS) return hit.value;
    const value = this.policy.overrides(service).then(
      (list) => (list.length === 0 ? ToolOverrides.NONE : new ToolOverrides(list)),
      (err: unknown) => {
        // Not cached: the next call asks again.
        this.entries.delete(serviceId);
        throw err;
      },
    );
    this.entries.set(serviceId, { at: now, value });
    return value;
  }

  drop(serviceId?: number): void {
    if (serviceId === undefined) this.entries.clear();
    else this.entries.delete(serviceId);
  }
}

/** A group as its face serves it (issue 17): members by service id, each whole or a subset of tools. */
export interface GroupSpec {
  id: number;
  name: string;
  displayName: string;
  mode: 'all' | 'discovery';
  separator: string;
  members: { serviceId: number; tools?: string[] }[];
}

/** Groups and who may use them, asked of the exposure module (the gateway reads no module table). */
export interface GroupDirectory {
  byName(name: string): Promise<GroupSpec | undefined>;
  /** Whether the user may use the group itself; its members are asked of `ToolPolicy.mayUseService` as well. */
  mayUseGroup(user: AccessCaller, groupId: number): Promise<boolean>;
}
