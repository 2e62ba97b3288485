import { UserStatus } from '@toolport/contract';
import type { ConfigEvents } from '../../infra/events.js';
import type { ServiceCatalog } from '../catalog.js';
import type { OverridesCache } from '../tool-policy.js';
import type { GroupFace } from './group-face.js';
import type { DownstreamSession } from './session.js';
import type { SessionRegistry } from './session-registry.js';

export interface SessionReactionDeps {
  events: ConfigEvents;
  sessions: SessionRegistry;
  catalog: Pick<ServiceCatalog, 'byId' | 'switchedOffBy'>;
  principals: { byId(userId: number): Promise<{ status: number } | null> };
  face: Pick<GroupFace, 'forget'>;
  overrides?: Pick<OverridesCache, 'drop'>;
}

const relist = (s: DownstreamSession, kinds = ['tools', 'prompts', 'resources']) => {
  for (const kind of kinds) s.notify({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` });
};

/**
 * What the sessions do when the configuration changes (a disabled or removed service, a disabled user, a
 * changed group, access list or tool list). The pool reacts to the same events for its processes. Returns
 * the function that stops listening.
 */
export function reactToConfiguration({ events, sessions, catalog, principals, face, overrides }: SessionReactionDeps): () => void {
  return events.on((event) => {
    if (event.type === 'service.removed') sessions.removeWhere((s) => s.serviceId === event.serviceId, 'service removed');
    if (event.type === 'service.changed') {
      // A user connected their account (or a connection changed): sessions opened before they did re-list.
      for (const s of sessions.where((s) => s.serviceId === event.serviceId && s.awaitingConnection)) relist(s, ['tools']);
      void catalog.byId(event.serviceId).then((service) => {
        if (!service?.enabled)
          sessions.removeWhere((s) => s.serviceId === event.serviceId, service ? 'service disabled' : 'service removed');
      });
    }
    // A group edited, a member enabled, disabled or removed, or an access list changed (a member may now be
    // hidden from some users, or shown): every group client re-lists. (A member's own list_changed reaches
    // them through its member session.)
    if (
      event.type === 'groups.changed' ||
      event.type === 'service.changed' ||
      event.type === 'service.removed' ||
      event.type === 'access.changed'
    ) {
      if (event.type === 'groups.changed') face.forget();
      for (const s of sessions.where((s) => s.serviceId < 0)) relist(s);
    }
    if (event.type === 'tools.changed') {
      // What the service's clients list changed: they hear it like an upstream's own list_changed.
      overrides?.drop(event.serviceId);
      // Group sessions (negative ids) hear it too: the member may be one of theirs.
      for (const s of sessions.where((s) => s.serviceId === event.serviceId || s.serviceId < 0)) relist(s, ['tools']);
    }
    if (event.type === 'user.changed') {
      void principals.byId(event.userId).then(async (user) => {
        if (user?.status !== UserStatus.Enabled) {
          sessions.removeWhere((s) => s.userId === event.userId, user ? 'user disabled' : 'user deleted');
          return;
        }
        // A personal switch turned off ends that user's sessions on the service, and theirs only.
        const off = await catalog.switchedOffBy(event.userId);
        if (off.size > 0) sessions.removeWhere((s) => s.userId === event.userId && off.has(s.serviceId), 'service switched off');
        // In their groups the member is hidden instead (group-face.ts): their group sessions re-list.
        for (const s of sessions.where((s) => s.serviceId < 0 && s.userId === event.userId)) relist(s);
      });
    }
  });
}
