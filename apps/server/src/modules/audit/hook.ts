import { isAdminRole } from '@toolport/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyFields, maskChanges } from './mask.js';
import type { NewAuditEntry } from './repo.js';
import { type AuditedRequest, type AuditedRoute, auditedRoutes } from './routes-audited.js';
import type { AuditTrail } from './trail.js';

const asRecord = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const present = (v: Record<string, unknown>) => Object.keys(v).length > 0;

/** The `data` of a JSON envelope being sent, if any. */
function dataOf(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return undefined;
  try {
    const data = (JSON.parse(payload) as { data?: unknown }).data;
    return data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The entry of an answered request of an audited route, or nothing when it is not one to record. */
export function entryOf(req: FastifyRequest, reply: FastifyReply, route: AuditedRoute, payload: unknown): NewAuditEntry | undefined {
  const status = reply.statusCode;
  const failed = status >= 400;
  const admin = req.principal ? isAdminRole(req.principal.role) : false;
  // A refused sign-in is recorded (a flood refused by the rate limit is counted in the metrics, not here).
  const refused = route.signIn !== undefined && failed && status < 500 && status !== 429;
  if (route.signIn !== undefined && failed && !refused) return undefined;
  // Otherwise an administrator's request, done or failed; callers the guard refused never reached the route.
  if (route.signIn === undefined && !admin) return undefined;
  const view: AuditedRequest = {
    params: asRecord(req.params),
    query: asRecord(req.query),
    body: bodyFields(req.body),
    data: failed ? undefined : dataOf(payload),
    admin,
  };
  if (!failed && route.when && !route.when(view)) return undefined;

  let actor: Pick<NewAuditEntry, 'actor_type' | 'actor_id' | 'actor_name'>;
  if (route.signIn) {
    const user = asRecord(view.data?.user);
    actor =
      !refused && typeof user.id === 'number'
        ? { actor_type: 'user', actor_id: user.id, actor_name: String(user.username ?? '') }
        : { actor_type: 'anonymous', actor_id: null, actor_name: String(asRecord(view.body).username ?? '') };
  } else if (req.principal) {
    actor = { actor_type: 'user', actor_id: req.principal.id, actor_name: req.principal.username };
  } else {
    actor = { actor_type: 'anonymous', actor_id: null, actor_name: '' };
  }
  const fields = route.fields
    ? route.fields(view)
    : {
        ...(present(view.params) ? { params: view.params } : {}),
        ...(present(view.query) ? { query: view.query } : {}),
        ...(view.body !== undefined && view.body !== null ? { body: view.body } : {}),
      };
  const id = route.id?.(view);
  return {
    ...actor,
    address: req.ip ?? '',
    action: typeof route.action === 'function' ? route.action(view) : route.action,
    object_type: route.object,
    object_id: route.signIn ? (actor.actor_id === null ? '' : String(actor.actor_id)) : id === undefined || id === null ? '' : String(id),
    outcome: refused ? 'refused' : failed ? 'failed' : 'ok',
    via: `${req.method} ${req.routeOptions.url}`,
    changes: maskChanges(fields),
  };
}

/**
 * The one place HTTP changes are recorded: after the handler, before the answer leaves, every request an
 * administrator made to an audited route (routes-audited.ts), done (`ok`) or answered with an error
 * (`failed`), and every sign-in, let in (`ok`) or not (`refused`), becomes one entry. Written
 * before the answer, so whoever sees the answer finds the entry; a failed write is logged and does not turn
 * the change that was made into an error.
 */
export function installAuditHook(app: FastifyInstance, trail: Pick<AuditTrail, 'record'>): void {
  app.addHook('onSend', async (req, reply, payload) => {
    const url = req.routeOptions.url;
    if (!url?.startsWith('/api/')) return payload;
    const route = auditedRoutes.get(`${req.method} ${url}`);
    if (!route) return payload;
    try {
      const entry = entryOf(req, reply, route, payload);
      if (entry) await trail.record(entry);
    } catch (err) {
      req.log.error({ err }, 'audit entry not written');
    }
    return payload;
  });
}
