import type { CustomServiceRequest, CustomServiceResult } from '@toolport/contract';
import type { Logger } from 'pino';
import type { ServiceRow } from '../../../db/schema.js';
import { badRequest } from '../../../http/errors.js';
import type { Principal } from '../../../http/principals.js';
import type { ServiceLog } from '../../../infra/service-log.js';
import { type CustomDraft, type HealthChecks, previewTools, type ServicesService } from '../../services/index.js';
import { InstallError, type PackagePlan } from '../installers/types.js';
import { type MarketInstaller, pinnedPlanOf } from './installer.js';
import type { InstallTasks } from './tasks.js';

/** A remote that does not answer within this long is created and said to be "not answering yet". */
const FIRST_CHECK_WAIT_MS = 15_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Custom services, as the custom install dialog and the batch import create them. The catalog
 * checks and stores the service; an `npx`/`uvx` one has its package pinned into DATA_DIR first
 * (decision 0035); any other stdio one is installed when its first health check passes, followed
 * as an install task; a remote's answer says whether it answered its first check.
 */
export class CustomInstalls {
  /** First health checks of new services, awaited on shutdown. */
  private readonly background = new Set<Promise<void>>();

  /** How long creating a remote waits for its first check before answering without it. */
  private readonly firstCheckWaitMs: number;

  constructor(
    private readonly deps: {
      services: ServicesService;
      health: HealthChecks;
      tasks: InstallTasks;
      installer: Pick<MarketInstaller, 'startPinned'>;
      serviceLog: Pick<ServiceLog, 'write' | 'redact'>;
      logger: Logger;
      firstCheckWaitMs?: number;
    },
  ) {
    this.firstCheckWaitMs = deps.firstCheckWaitMs ?? FIRST_CHECK_WAIT_MS;
  }

  async create(caller: Principal, req: CustomServiceRequest): Promise<CustomServiceResult> {
    if (req.preview && !req.name.trim()) {
      const plan = await this.deps.services.previewOpenApi(req);
      return { service_id: 0, name: '', display_name: '', status: 'preview', tools: previewTools(plan), base_url: plan.baseUrl };
    }
    const { draft, name } = await this.deps.services.prepareCustom(req);
    if (req.preview) {
      // An OpenAPI document checked and compiled, nothing stored: the tools it would create.
      if (!draft.openapi) throw badRequest('openapi_service.preview_openapi_only');
      const base = { service_id: 0, name, display_name: draft.displayName, status: 'preview' as const };
      return { ...base, tools: previewTools(draft.openapi), base_url: draft.openapi.baseUrl };
    }
    if (draft.type === 'stdio' && (draft.packageManager === 'npm' || draft.packageManager === 'uv'))
      return this.pinned(caller, req, draft, name);
    const row = await this.deps.services.addCustom(req);
    if (row.type !== 'stdio') {
      // The answer says whether the remote answers (issue 15): a first check, waited for a while only.
      const check = this.deps.health.check(row.id);
      this.inBackground(check.then(() => undefined));
      const first = await Promise.race([check.catch(() => undefined), sleep(this.firstCheckWaitMs).then(() => undefined)]);
      const base = {
        service_id: row.id,
        name: row.name,
        display_name: row.display_name,
        status: 'completed' as const,
        ...(draft.openapi ? { tools: previewTools(draft.openapi), base_url: draft.openapi.baseUrl } : {}),
      };
      if (!first) return base;
      return { ...base, health_status: first.health_status, health_details: first.health_details };
    }
    const taskId = await this.deps.tasks.create({
      kind: 'custom',
      serviceId: row.id,
      createdBy: caller.id,
      status: 'installing',
      payload: { name: row.name },
    });
    this.inBackground(this.firstCheck(row, taskId));
    return { service_id: row.id, name: row.name, display_name: row.display_name, status: 'installing', task_id: taskId };
  }

  /**
   * `npx …`/`uvx …` (decision 0035): the package is installed pinned into DATA_DIR by the marketplace's
   * install job and its executable runs directly; the typed command is kept for display and export.
   */
  private async pinned(caller: Principal, req: CustomServiceRequest, draft: CustomDraft, name: string): Promise<CustomServiceResult> {
    let plan: PackagePlan | undefined;
    try {
      plan = pinnedPlanOf(req.command);
    } catch (err) {
      if (err instanceof InstallError)
        throw badRequest('service.command_not_pinnable', { reason: err.message.slice(0, 300) }).inField('command');
      throw err;
    }
    if (!plan) throw badRequest('service.command_parse_failed').inField('command');
    const { row, taskId } = await this.deps.installer.startPinned(
      caller.id,
      {
        name,
        nameSeed: draft.nameSeed,
        displayName: draft.displayName,
        description: draft.description,
        source: 'custom',
        packageManager: draft.packageManager,
        packageName: plan.identifier,
        marketSource: plan.kind,
        plan,
        envVars: [],
        isolation: draft.isolation,
        typedCommand: req.command.trim(),
      },
      draft.env,
    );
    return { service_id: row.id, name: row.name, display_name: row.display_name, status: 'installing', task_id: taskId };
  }

  /** A custom stdio install is done when its first health check is: the command really starts an MCP server. */
  private async firstCheck(row: ServiceRow, taskId: string): Promise<void> {
    const { serviceLog, tasks } = this.deps;
    const log = (level: 'info' | 'error', line: string) => {
      serviceLog.write({ serviceId: row.id, serviceName: row.name, phase: 'install', level, message: line });
      return tasks.log(taskId, serviceLog.redact(line));
    };
    const runner = row.package_name ? `${row.command} (${row.package_manager} package ${row.package_name})` : row.command;
    await log('info', `Custom service ${row.name} created: ${runner}`);
    await log('info', 'Starting the service and checking it answers initialize and tools/list…');
    const result = await this.deps.health.check(row.id);
    if (result.health_status === 'healthy') {
      await log('info', `Service is healthy: ${result.tool_count} tools`);
      await tasks.finish(taskId, 'completed', '', { health_status: result.health_status, tool_count: result.tool_count });
    } else {
      const reason = result.health_details || result.health_status;
      await log('error', `Health check failed: ${reason}`);
      await tasks.finish(taskId, 'failed', serviceLog.redact(reason), { health_status: result.health_status });
    }
  }

  private inBackground(work: Promise<void>): void {
    const tracked = work.catch((err) => this.deps.logger.error({ err }, 'service background work failed'));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  /** Lets background work finish writing before the database closes. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.background]);
  }
}
