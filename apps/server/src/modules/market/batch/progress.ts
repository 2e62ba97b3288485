import type { BatchProgressEvent } from '@toolport/contract';
import { isAdminRole, UserStatus } from '@toolport/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { verifyAccessToken } from '../../../http/access-tokens.js';
import { AppError, forbidden, notFound, unauthorized } from '../../../http/errors.js';
import { bearerToken } from '../../../http/guard.js';
import type { Principal, Principals } from '../../../http/principals.js';
import type { Secrets } from '../../../infra/secrets.js';
import type { InstallTasks } from '../install/tasks.js';
import type { BatchSummary } from './importer.js';

const POLL_MS = 250;
const KEEPALIVE_MS = 15_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The batch import's progress as `text/event-stream`. EventSource cannot send headers, so the
 * admin's access token may come in `?token=` (checked exactly as the guard checks a bearer token).
 * Events are read from the task's stored log, so a late subscriber, or one connected to another
 * replica, receives the whole history, then follows until `done`. Each event carries its sequence
 * number as its id: a reconnecting EventSource resumes after `Last-Event-ID`, and one that comes
 * back after the end is answered 204, which tells it to stop.
 */
export class ProgressStreams {
  private readonly open = new Set<() => void>();

  constructor(
    private readonly deps: {
      tasks: Pick<InstallTasks, 'get' | 'linesAfter'>;
      secrets: Pick<Secrets, 'jwtKey'>;
      principals: Pick<Principals, 'byId'>;
      logger: Logger;
    },
  ) {}

  async admin(req: FastifyRequest, queryToken: string | undefined): Promise<Principal> {
    const token = queryToken || bearerToken(req);
    if (!token) throw unauthorized('auth.token_missing');
    const claims = await verifyAccessToken(this.deps.secrets.jwtKey, token);
    if (!claims) throw unauthorized();
    const principal = await this.deps.principals.byId(claims.userId);
    if (!principal || principal.authVersion !== claims.authVersion) throw unauthorized();
    if (principal.status !== UserStatus.Enabled) throw new AppError(401, 'auth.user_disabled');
    if (!isAdminRole(principal.role)) throw forbidden();
    return principal;
  }

  async stream(req: FastifyRequest, reply: FastifyReply, taskId: string): Promise<void> {
    const task = await this.deps.tasks.get(taskId);
    if (task?.kind !== 'batch') throw notFound('market.batch_not_found');
    const resumeAfter = Number(req.headers['last-event-id']);
    let seq = Number.isInteger(resumeAfter) && resumeAfter > 0 ? resumeAfter : 0;
    if (
      seq > 0 &&
      task.status !== 'pending' &&
      task.status !== 'installing' &&
      (await this.deps.tasks.linesAfter(taskId, seq)).length === 0
    ) {
      reply.status(204).send();
      return;
    }

    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    let closed = false;
    const end = () => {
      if (closed) return;
      closed = true;
      raw.end();
    };
    raw.on('close', () => {
      closed = true;
    });
    this.open.add(end);
    const write = (id: number | undefined, data: string) => {
      if (!closed) raw.write(`${id === undefined ? '' : `id: ${id}\n`}data: ${data}\n\n`);
    };

    const counts: BatchSummary = { success: 0, skipped: 0, failed: 0 };
    let lastWrite = Date.now();
    try {
      while (!closed) {
        const lines = await this.deps.tasks.linesAfter(taskId, seq);
        for (const { seq: n, line } of lines) {
          seq = n;
          write(n, line);
          lastWrite = Date.now();
          const event = parseEvent(line);
          if (event?.status === 'done') return;
          const status = event?.status;
          if (status === 'success' || status === 'skipped' || status === 'failed') counts[status] += 1;
        }
        if (lines.length === 0) {
          const now = await this.deps.tasks.get(taskId);
          const finished = !now || (now.status !== 'pending' && now.status !== 'installing');
          // A batch that ended without its `done` (its server stopped): what happened is all there is.
          if (finished && (await this.deps.tasks.linesAfter(taskId, seq)).length === 0) {
            write(undefined, JSON.stringify({ status: 'done', summary: counts } satisfies BatchProgressEvent));
            return;
          }
          if (Date.now() - lastWrite > KEEPALIVE_MS) {
            if (!closed) raw.write(': keep-alive\n\n');
            lastWrite = Date.now();
          }
          await sleep(POLL_MS);
        }
      }
    } catch (err) {
      this.deps.logger.warn({ err, taskId }, 'batch progress stream failed');
    } finally {
      this.open.delete(end);
      end();
    }
  }

  /** Ends every open stream (the server is stopping). */
  closeAll(): void {
    for (const end of [...this.open]) end();
  }
}

function parseEvent(line: string): { status?: string } | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as { status?: string }) : undefined;
  } catch {
    return undefined;
  }
}
