import type { InitializeRequest, InitializeResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { HealthStatus } from '../link-api.js';
import type { Channel } from './channel.js';
import { errorText } from './channel.js';
import { countTools, describeRoundTrip, describeServer, upstreamInitParams } from './handshake.js';
import type { EraDialect } from './lifecycle.js';
import type { LinkMode, Multiplexer } from './multiplexer.js';
import { UpstreamRpcError } from './request-table.js';
import type { ServerRequestRelay } from './server-requests.js';
import type { LinkDeps } from './types.js';

export interface LinkHealth {
  status: HealthStatus;
  details: string;
  /** The start failed because the server speaks only these 2026-07-28-era revisions (the pool checks it in one). */
  onlyModern?: string[];
  toolCount?: number;
  about?: string;
}

/**
 * What a refused `initialize` means when the server named only revisions of the 2026-07-28 era as the ones it
 * speaks (-32022 with `data.supported`): its clients of that era are served (modern-link.ts); a 2025-era one is not.
 */
export function modernOnlyRevisions(err: unknown): string[] | undefined {
  if (!(err instanceof UpstreamRpcError) || err.code !== -32022) return undefined;
  const supported = (err.data as { supported?: unknown } | undefined)?.supported;
  if (!Array.isArray(supported) || supported.length === 0) return undefined;
  return supported.every((v): v is string => typeof v === 'string' && v >= '2026-07-28') ? supported : undefined;
}

const modernOnlyNote = (revisions: string[] | undefined): string =>
  revisions ? ` (the tool server speaks only protocol revision ${revisions.join(', ')}: use a client of that revision)` : '';

export interface SessionDialectHost {
  mode: LinkMode;
  open(): Promise<Channel>;
  /** The first client's `initialize` on an isolated link: the upstream hears it (handshake.ts). */
  clientParams(): InitializeRequest['params'] | undefined;
  mux(): Multiplexer;
  relay(): ServerRequestRelay;
  deps: LinkDeps;
  /** Shared links report start, crash and recovery; per-user and per-session links only log. */
  onHealth?: (health: LinkHealth) => void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

/**
 * The wire dialect of protocol revision 2025-11-25 (the session era) behind the lifecycle's seam (lifecycle.ts):
 * `initialize` and `notifications/initialized` open a connection, the tool count is learnt for the health record;
 * once up, subscriptions and the log level are set again and a restarted upstream's sessions are told to list again.
 * Everything in between is the multiplexer's (multiplexer.ts).
 */
export class SessionEraDialect implements EraDialect {
  initResult: InitializeResult | undefined;
  toolCount: number | undefined;
  /**
   * The revisions the server named when it refused the 2025 handshake as one that speaks only the 2026-07-28 era:
   * no use retrying (a client of that era is served by a modern link); undefined once a start succeeds.
   */
  onlyModern: string[] | undefined;
  /** When the current start began, and whether an earlier connection had been up (its sessions list again). */
  private startedAt = 0;
  private restarted = false;
  /** Between `up` and `down`: the connection's own list changes are passed on. */
  private live = false;

  constructor(private readonly host: SessionDialectHost) {}

  open(): Promise<Channel> {
    return this.host.open();
  }

  receive(message: JSONRPCMessage): void {
    // What a process says of its lists before it is up is news to nobody (server-everything registers tools one by
    // one after `initialized`, each with a list_changed): no client has listed this process yet, and a restart is
    // announced once, when it is up (announceLists; decision 0051).
    if (!this.live && 'method' in message && !('id' in message) && message.method.endsWith('/list_changed')) return;
    this.host.mux().receive(message);
  }

  /** `initialize`, `notifications/initialized`, and the tool count for the health record. */
  async handshake(channel: Channel, current: () => boolean): Promise<void> {
    const mux = this.host.mux();
    this.live = false;
    this.startedAt = Date.now();
    mux.connectionOpened();
    this.host.relay().connectionOpened();
    const params = upstreamInitParams(this.host.mode, this.host.clientParams());
    const result = (await mux.internal('initialize', params, this.host.deps.tuning.initializeTimeoutMs, true)) as InitializeResult;
    if (!current()) return;
    channel.setProtocolVersion?.(result.protocolVersion);
    channel.send({ jsonrpc: '2.0', method: 'notifications/initialized' })?.catch(() => undefined);
    const toolCount = result.capabilities?.tools ? await this.countTools(true) : 0;
    if (!current()) return;
    this.restarted = this.initResult !== undefined;
    this.onlyModern = undefined;
    this.initResult = result;
    this.toolCount = toolCount;
  }

  up(): void {
    this.live = true;
    const result = this.initResult as InitializeResult;
    this.resubscribe();
    // A restarted process starts at its own default level: the level the sessions asked for again.
    this.host.mux().applyLevel();
    if (this.restarted) this.announceLists(result);
    this.host.onHealth?.({
      status: 'healthy',
      details: describeRoundTrip(this.toolCount, Date.now() - this.startedAt),
      toolCount: this.toolCount,
      about: describeServer(result),
    });
  }

  down(reason: string, onPurpose: boolean): void {
    this.live = false;
    this.host.mux().failAll(reason, onPurpose);
    if (!onPurpose) this.host.relay().withdrawAll(reason);
  }

  /** A start failed or a running connection died: on record, and the shared link's health says so. */
  failed(reason: string, restartInMs: number | undefined): void {
    this.host.log('error', restartInMs === undefined ? reason : `${reason}; restarting in ${restartInMs / 1000} s`);
    this.host.onHealth?.({
      status: 'unhealthy',
      details: this.host.deps.serviceLog.redact(reason),
      ...(this.onlyModern ? { onlyModern: this.onlyModern } : {}),
    });
  }

  /**
   * A server that speaks only the 2026-07-28 era refuses every 2025 handshake alike: the next 2025 client's request
   * tries again, nothing restarts it meanwhile.
   */
  refusal(err: unknown): string | undefined {
    this.onlyModern = modernOnlyRevisions(err);
    return this.onlyModern ? modernOnlyNote(this.onlyModern) : undefined;
  }

  /** The tool count is informative only: a failing tools/list is logged, not fatal. */
  async countTools(raw: boolean): Promise<number | undefined> {
    try {
      return await countTools(this.host.mux(), this.host.deps.tuning.initializeTimeoutMs, raw);
    } catch (err) {
      this.host.log('warn', `tools/list failed: ${errorText(err)}`);
      return undefined;
    }
  }

  /**
   * A restarted upstream may offer other tools, prompts and resources than the one its sessions
   * listed, and most servers do not say so at start: every attached session is told to list again
   * (docs/architecture.md §4), whatever the process itself sends.
   */
  private announceLists(result: InitializeResult): void {
    const caps = result.capabilities ?? {};
    for (const kind of ['tools', 'prompts', 'resources'] as const) {
      if (caps[kind]) this.host.mux().fanOut({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` });
    }
  }

  private resubscribe(): void {
    const mux = this.host.mux();
    const timeout = this.host.deps.tuning.initializeTimeoutMs;
    for (const uri of mux.subscriptions.uris()) {
      mux
        .internal('resources/subscribe', { uri }, timeout)
        .catch((err) => this.host.log('warn', `re-subscribing ${uri} failed: ${errorText(err)}`));
    }
  }
}
