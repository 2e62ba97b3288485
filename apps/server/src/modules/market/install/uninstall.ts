import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ServiceRow } from '../../../db/schema.js';
import { resolveInstallDir } from '../../../infra/install-dir.js';
import type { ServiceRows, ServicesService } from '../../services/index.js';

/** Stops and deletes services; request history, counters and log lines stay. */
export class Uninstaller {
  constructor(private readonly deps: { services: ServicesService; rows: ServiceRows; dataDir: string; logger: Logger }) {}

  async uninstall(id: number): Promise<ServiceRow> {
    const row = await this.deps.services.mustGet(id);
    await this.deps.rows.remove(id);
    this.removeInstalledFiles(row);
    return row;
  }

  /**
   * The installed package (under DATA_DIR/packages) and the working directory DATA_DIR/services/<id>.
   * Only those are the gateway's to delete: an admin's own executable is not.
   */
  private removeInstalledFiles(row: ServiceRow): void {
    const { dataDir } = this.deps;
    const packages = path.resolve(dataDir, 'packages');
    const dirs = [path.resolve(dataDir, 'services', String(row.id))];
    const installDir = resolveInstallDir(dataDir, row.install_dir);
    if (installDir && path.resolve(installDir).startsWith(`${packages}${path.sep}`)) dirs.push(path.resolve(installDir));
    for (const dir of dirs) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch (err) {
        this.deps.logger.warn({ err, serviceId: row.id, dir }, 'could not remove installed files');
      }
    }
  }
}
