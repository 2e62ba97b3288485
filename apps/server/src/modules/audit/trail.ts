import { userInfo } from 'node:os';
import type { AuditEntry, AuditObjectType } from '@toolport/contract';
import type { Logger } from 'pino';
import { maskChanges } from './mask.js';
import type { AuditRepo, NewAuditEntry } from './repo.js';

/** What an action outside HTTP (a `toolport` command) records about itself. */
export interface CommandAction {
  /** The command line's verb: `toolport import`, `toolport backup`… */
  command: string;
  action: string;
  object: AuditObjectType;
  id?: string;
  /** The command's arguments and result, masked before they are stored. */
  changes?: Record<string, unknown>;
}

/** Who runs a command: the operating system's account (the command line has no Toolport user). */
export function commandActor(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? '';
  }
}

/**
 * Writes audit entries: to the database, and, while the preference AuditLogForwarding is on, to the
 * server log as one `audit` line each (JSON with LOG_FORMAT=json), for a SIEM that reads the log stream.
 */
export class AuditTrail {
  constructor(
    private readonly repo: Pick<AuditRepo, 'insert'>,
    private readonly forward: () => boolean,
    private readonly logger: Pick<Logger, 'info'>,
  ) {}

  async record(e: NewAuditEntry): Promise<AuditEntry> {
    const entry = await this.repo.insert(e);
    if (this.forward()) this.logger.info({ audit: entry }, 'audit');
    return entry;
  }

  /** An action of the command line, by the operating system's account that ran it. */
  command(a: CommandAction): Promise<AuditEntry> {
    return this.record({
      actor_type: 'cli',
      actor_id: null,
      actor_name: commandActor(),
      address: '',
      action: a.action,
      object_type: a.object,
      object_id: a.id ?? '',
      outcome: 'ok',
      via: a.command,
      changes: maskChanges(a.changes ?? {}),
    });
  }
}
