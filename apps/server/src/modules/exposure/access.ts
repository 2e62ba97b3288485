import { type AccessList, isAdminRole } from '@toolport/contract';
import { type DatabaseGate, LastKnown } from '../../db/availability.js';
import { badRequest } from '../../http/errors.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { ExposureRepo, Subject } from './repo.js';

/** The whole picture is re-read at most this often; an 'access.changed' event drops it at once. */
const CACHE_MS = 5000;

interface Picture {
  at: number;
  services: Map<number, Set<number>>;
  groups: Map<number, Set<number>>;
}

/**
 * Who may use a service or a group (issue 17): everyone signed in unless restricted, then only the
 * listed users; admins always. Read by the proxy's authentication on every request (through the
 * gateway's ToolPolicy port) and by the lists the console shows, so the restricted subjects are held
 * in memory: usually a handful of rows.
 */
export class AccessLists {
  private picture: Promise<Picture> | undefined;
  private pictureAt = 0;

  /** The lists as last read, answered while the database is away (decision 0043). */
  private readonly lastRead: LastKnown<Map<number, Set<number>>>;

  constructor(
    private readonly repo: ExposureRepo,
    private readonly events: ConfigEvents,
    gate?: DatabaseGate,
  ) {
    this.lastRead = new LastKnown(gate);
    events.on((e) => {
      if (e.type === 'access.changed' || e.type === 'user.changed') this.picture = undefined;
    });
  }

  private load(): Promise<Picture> {
    const now = Date.now();
    if (this.picture && now - this.pictureAt < CACHE_MS) return this.picture;
    this.pictureAt = now;
    const loading = Promise.all([
      this.lastRead.get('service', () => this.repo.restricted('service')),
      this.lastRead.get('group', () => this.repo.restricted('group')),
    ]).then(([services, groups]) => ({
      at: now,
      services,
      groups,
    }));
    this.picture = loading;
    loading.catch(() => {
      if (this.picture === loading) this.picture = undefined;
    });
    return loading;
  }

  async mayUse(user: { id: number; role: number }, subject: Subject, id: number): Promise<boolean> {
    if (isAdminRole(user.role)) return true;
    const picture = await this.load();
    const users = (subject === 'service' ? picture.services : picture.groups).get(id);
    return !users || users.has(user.id);
  }

  /** A filter for lists: whether the user may use each subject of a kind. */
  async filterFor(user: { id: number; role: number }, subject: Subject): Promise<(id: number) => boolean> {
    if (isAdminRole(user.role)) return () => true;
    const picture = await this.load();
    const restricted = subject === 'service' ? picture.services : picture.groups;
    return (id) => {
      const users = restricted.get(id);
      return !users || users.has(user.id);
    };
  }

  /**
   * The subjects of a kind the user may not use (none for admins): what analytics leave out. Usually
   * empty, so the figures' queries stay as they were for everybody who sees everything.
   */
  async hiddenFrom(user: { id: number; role: number }, subject: Subject): Promise<number[]> {
    if (isAdminRole(user.role)) return [];
    const picture = await this.load();
    const restricted = subject === 'service' ? picture.services : picture.groups;
    return [...restricted.entries()].filter(([, users]) => !users.has(user.id)).map(([id]) => id);
  }

  /** For the services list's "N of M tools enabled" (the overrides share this module's tables). */
  disabledTools(): Promise<Map<string, number>> {
    return this.repo.disabledCounts();
  }

  async get(subject: Subject, id: number): Promise<AccessList> {
    const { restricted, userIds } = await this.repo.accessOf(subject, id);
    return { restricted, user_ids: userIds };
  }

  /** Unknown user ids are refused (400): checked before anything is written. */
  async checkUsers(userIds: number[]): Promise<void> {
    const ids = [...new Set(userIds)];
    const found = new Set((await this.repo.existingUserIds(ids)).map((u) => u.id));
    const missing = ids.filter((u) => !found.has(u));
    if (missing.length > 0) throw badRequest('access.unknown_users', { ids: missing.join(', ') }, 'unknown_users');
  }

  async set(subject: Subject, id: number, access: AccessList): Promise<void> {
    await this.checkUsers(access.user_ids);
    const ids = [...new Set(access.user_ids)];
    await this.repo.setAccess(subject, id, access.restricted, ids);
    this.picture = undefined;
    this.events.emit({ type: 'access.changed' });
  }
}
