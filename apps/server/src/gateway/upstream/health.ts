import type { Logger } from 'pino';
import { LocalisedError, storedText } from '../../i18n/localised-error.js';
import type { Leadership } from '../../infra/leader.js';
import type { ServiceCatalog, ServiceSpec } from '../catalog.js';
import type { HealthResult } from '../link-api.js';
import { UpstreamConnectionMissing } from '../upstream-auth.js';
import { errorText } from './channel.js';
import { describeRoundTrip } from './handshake.js';
import { type Link, STOPPED_WHILE_CHECKED } from './link.js';
import type { OptionsReader, ServiceLogWriter } from './types.js';

export interface HealthHost {
  catalog: ServiceCatalog;
  serviceLog: ServiceLogWriter;
  options: OptionsReader;
  logger: Logger;
  /**
   * Several replicas: remote services are checked by the leader only (they are the same service for
   * every replica), and by every replica while nobody can tell who leads. Unset: this replica checks.
   */
  leader?: Pick<Leadership, 'runs'>;
  /** The service's shared link when it is up and ready: checked through it. */
  readyLink(serviceId: number): Link | undefined;
  /**
   * Starts a short-lived connection (initialize + tools/list), closes it, returns the tool count.
   * and the server's description of itself. Throws AuthorizedPerUser when a per-user OAuth service
   * answered 401 to this token-less check.
   */
  probe(spec: ServiceSpec): Promise<ProbeResult>;
}

/**
 * A per-user OAuth service answered the health check's token-less connection with 401: it is up and
 * asks each user for their own account (docs/decisions/0030-upstream-oauth.md), which is not a fault.
 */
/** What a short-lived connection learned: the tool count and the server's own description. */
export interface ProbeResult {
  toolCount: number | undefined;
  about: string | undefined;
  /** Checked in this revision: the server speaks only it (it refused the 2025 handshake). */
  revision?: string;
}

export class AuthorizedPerUser extends Error {
  constructor() {
    super('reachable; it answers 401 until each user connects their own account');
    this.name = 'AuthorizedPerUser';
  }
}

/**
 * A service without an OAuth connection answered the check's connection with 401: it needs authorization,
 * which an administrator gives with Connect (the discovery that followed the 401 set it up as shared).
 */
export class NeedsAuthorization extends LocalisedError {
  constructor() {
    super('health.needs_authorization');
    this.name = 'NeedsAuthorization';
  }
}

/**
 * A real MCP round trip, recorded through the catalog: through the running shared link (ping +
 * tools/list) when there is one, else through a short-lived connection of its own (a stopped
 * `demand` service, a remote upstream).
 */
export async function checkServiceHealth(host: HealthHost, serviceId: number): Promise<HealthResult> {
  const spec = await host.catalog.byId(serviceId);
  if (!spec) return { status: 'unknown', details: 'service not found', checkedAt: Date.now() };
  let result: HealthResult;
  if (!spec.enabled) {
    result = { status: 'stopped', details: 'service is disabled', checkedAt: Date.now() };
  } else {
    const started = Date.now();
    const link = spec.type === 'stdio' ? host.readyLink(serviceId) : undefined;
    try {
      const probed: ProbeResult = link ? { toolCount: await link.roundTrip(), about: link.about } : await host.probe(spec);
      const { toolCount, about, revision } = probed;
      const checkedAt = Date.now();
      const only = revision ? `; protocol revision ${revision} only` : '';
      // An OpenAPI service opens only once its base URL answers (openapi-channel.ts).
      const details =
        spec.type === 'openapi'
          ? `document loaded, ${toolCount ?? 0} operations, base URL answers (${checkedAt - started} ms)`
          : `${describeRoundTrip(toolCount, checkedAt - started)}${only}`;
      result = { status: 'healthy', details, checkedAt };
      if (toolCount !== undefined) result.toolCount = toolCount;
      if (about) result.about = about;
    } catch (err) {
      if (err instanceof AuthorizedPerUser) result = { status: 'healthy', details: err.message, checkedAt: Date.now() };
      // A 401 with no connection, or a shared connection missing: the console offers Connect (decision 0054).
      else if (err instanceof NeedsAuthorization || (err instanceof UpstreamConnectionMissing && !err.perUser)) {
        result = { status: 'needs_authorization', details: storedText(err.data()), checkedAt: Date.now() };
      }
      // A demand-started process that reached its idle time during the check stopped as it should: not a fault.
      else if (link && link.state === 'stopped') result = { status: 'stopped', details: STOPPED_WHILE_CHECKED, checkedAt: Date.now() };
      else result = { status: 'unhealthy', details: host.serviceLog.redact(errorText(err)), checkedAt: Date.now() };
    }
  }
  const { checkedAt: _at, ...health } = result;
  await host.catalog.recordHealth(serviceId, health).catch((err) => host.logger.error({ err, serviceId }, 'recording health failed'));
  return result;
}

/**
 * Every HealthCheckIntervalSeconds (0 = off), checks the enabled services that are running or
 * remote, one at a time; a stopped `demand` service is left alone rather than started for it. Each
 * replica checks the stdio processes it runs itself; remote services only on the leader.
 */
export class PeriodicHealth {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly host: HealthHost) {}

  schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const seconds = this.host.options.int('HealthCheckIntervalSeconds');
    if (this.stopped || !(seconds > 0)) return;
    this.timer = setTimeout(() => void this.round(), seconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async round(): Promise<void> {
    this.timer = undefined;
    try {
      for (const spec of await this.host.catalog.enabledServices()) {
        if (this.stopped) return;
        if (spec.type === 'stdio' && !this.host.readyLink(spec.id)) continue;
        if (spec.type !== 'stdio' && !(this.host.leader?.runs('guarded') ?? true)) continue;
        await checkServiceHealth(this.host, spec.id);
      }
    } catch (err) {
      this.host.logger.error({ err }, 'periodic health checks failed');
    }
    if (!this.timer) this.schedule();
  }
}
