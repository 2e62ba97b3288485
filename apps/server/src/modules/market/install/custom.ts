import type { CustomServiceRequest, CustomServiceResult } from '@toolport/contract';
import type { Logger } from 'pino';
import type { ServiceRow } from '../../../db/schema.js';
import type { Principal } from '../../../http/principals.js';
import type { ServiceLog } from '../../../infra/service-log.js';
import type { HealthChecks, ServicesService } from '../../services/index.js';
import type { InstallTasks } from './tasks.js';

/**
 * Custom services, as the custom install dialog and the batch import create them. The catalog
 * checks and stores the service; a stdio one is then installed when its first health check
 * passes, followed as an install task.
 */
export class CustomInstalls {
  /** First health checks of new services, awaited on shutdown. */
  private readonly background = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      services: ServicesService;
      health: HealthChecks;
      tasks: InstallTasks;
      serviceLog: Pick<ServiceLog, 'write' | 'redact'>;
      logger: Logger;
    },
  ) {}

  async create(caller: Principal, req: CustomServiceRequest): Promise<CustomServiceResult> {
    const row = await this.deps.services.addCustom(req);
    if (row.type !== 'stdio') {
      this.inBackground(this.deps.health.check(row.id).then(() => undefined));
      return { service_id: row.id, name: row.name, display_name: row.display_name, status: 'completed' };
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
