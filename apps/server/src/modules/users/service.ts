import {
  type ChangePasswordRequest,
  type CreateUserRequest,
  type EditUserRequest,
  type PublicUser,
  Role,
  type SelfUser,
  type UpdateSelfRequest,
  USER_SEARCH_LIMIT,
  USERS_PAGE_SIZE,
  UserStatus,
} from '@toolport/contract';
import type { UserRow } from '../../db/schema.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import type { ConfigEvents } from '../../infra/events.js';
import { hashPassword, verifyPassword } from '../../infra/passwords.js';
import type { Secrets } from '../../infra/secrets.js';
import { issueApiKey } from './api-keys.js';
import { SUPER_ADMIN_USERNAME } from './bootstrap.js';
import { type ManageAction, manageRule } from './manage-rules.js';
import { toPublicUser, toSelfUser } from './presenter.js';
import type { UsersRepo } from './repo.js';

/** Signs a user out everywhere; the auth module's refresh token store provides it. */
export interface RefreshTokenRevoker {
  revokeAllOf(userId: number): Promise<void>;
}

/** What the users service is built from; the API and the CLI both provide it. */
export interface UsersDeps {
  usersRepo: UsersRepo;
  refreshTokens: RefreshTokenRevoker;
  secrets: Secrets;
  events: ConfigEvents;
}

/** The largest id the `integer` id column holds: a bigger number in a search cannot be an id. */
const MAX_ID = 2_147_483_647;

/**
 * The rules about users: profiles, passwords, API keys, and what an administrator may do to whom.
 * Every change to role, status, password or existence emits `user.changed`, so cached principals
 * (and the gateway) forget the user at once.
 */
export class UsersService {
  private readonly repo: UsersRepo;

  constructor(private readonly deps: UsersDeps) {
    this.repo = deps.usersRepo;
  }

  async self(userId: number): Promise<SelfUser> {
    const row = await this.mustGet(userId);
    return toSelfUser(row, await this.repo.identitiesOf([row.id]), this.deps.secrets);
  }

  /** Password users edit their own profile; provider users' profiles come from the provider. */
  async updateSelf(userId: number, patch: UpdateSelfRequest): Promise<PublicUser> {
    const row = await this.mustGet(userId);
    if (!row.password_hash) {
      throw new AppError(403, 'user.oauth_user_cannot_edit_profile', undefined, { code: 'oauth_user_cannot_edit_profile' });
    }
    const rename = patch.username !== undefined && patch.username !== row.username ? patch.username : undefined;
    if (rename) await this.checkRename(row, rename);
    try {
      await this.repo.update(row.id, {
        ...(rename ? { username: rename } : {}),
        ...(patch.display_name !== undefined ? { display_name: patch.display_name } : {}),
        ...(patch.email !== undefined ? { email: patch.email } : {}),
        updated_at: Date.now(),
      });
    } catch (err) {
      // Someone took the name between the check and the update: the unique index refused it.
      if (rename && (await this.repo.byUsername(rename))) throw conflict('user.username_taken', { username: rename });
      throw err;
    }
    this.changed(row.id);
    return this.present(await this.mustGet(row.id));
  }

  async changePassword(userId: number, req: ChangePasswordRequest): Promise<void> {
    const row = await this.mustGet(userId);
    if (!row.password_hash) {
      throw badRequest('user.oauth_user_cannot_change_password', undefined, 'oauth_user_cannot_change_password');
    }
    if (!(await verifyPassword(row.password_hash, req.current_password))) {
      throw badRequest('user.current_password_incorrect', undefined, 'current_password_incorrect');
    }
    await this.setPassword(row.id, req.new_password);
  }

  /** A new API key for the user; the old one stops working because keys are found by their hash. */
  async rotateApiKey(userId: number): Promise<string> {
    const row = await this.mustGet(userId);
    const key = issueApiKey(this.deps.secrets);
    await this.repo.update(row.id, { api_key_hash: key.hash, api_key_enc: key.encrypted, updated_at: Date.now() });
    this.changed(row.id);
    return key.plain;
  }

  async list(page: number): Promise<{ users: PublicUser[]; total: number }> {
    const [rows, total] = await Promise.all([this.repo.page(page * USERS_PAGE_SIZE, USERS_PAGE_SIZE), this.repo.count()]);
    return { users: await this.presentAll(rows), total };
  }

  async search(keyword: string): Promise<PublicUser[]> {
    const asId = /^\d{1,10}$/.test(keyword) ? Number(keyword) : undefined;
    const id = asId !== undefined && asId <= MAX_ID ? asId : undefined;
    return this.presentAll(await this.repo.search(keyword, id, USER_SEARCH_LIMIT));
  }

  /**
   * Creates a user with an API key, without permission rules: the CLI (an operator with shell
   * access) calls this directly, the API through `createAs`.
   */
  async create(input: CreateUserRequest): Promise<PublicUser> {
    if (await this.repo.byUsername(input.username)) throw conflict('user.username_taken', { username: input.username });
    const key = issueApiKey(this.deps.secrets);
    const now = Date.now();
    try {
      const row = await this.repo.insert({
        username: input.username,
        display_name: input.display_name,
        email: input.email,
        password_hash: await hashPassword(input.password),
        role: input.role,
        status: UserStatus.Enabled,
        api_key_hash: key.hash,
        api_key_enc: key.encrypted,
        created_at: now,
        updated_at: now,
      });
      return this.present(row);
    } catch (err) {
      // Two creations of one name at once: the unique index decides, the loser gets the same 409.
      if (await this.repo.byUsername(input.username)) throw conflict('user.username_taken', { username: input.username });
      throw err;
    }
  }

  /** An administrator creates a user of a lower role than their own (so only the super admin creates admins). */
  async createAs(actor: Principal, input: CreateUserRequest): Promise<PublicUser> {
    if (input.role >= actor.role) throw forbidden('user.cannot_create_role');
    return this.create(input);
  }

  /** An administrator edits a user of a lower role, or themselves. The username is fixed. */
  async editAs(actor: Principal, input: EditUserRequest): Promise<PublicUser> {
    const row = await this.mustGet(input.id);
    if (row.id !== actor.id && row.role >= actor.role) throw forbidden('user.role_too_high');
    if (input.username !== undefined && input.username !== row.username) {
      throw badRequest('user.username_fixed', undefined, 'username_fixed');
    }
    await this.repo.update(row.id, {
      ...(input.display_name !== undefined ? { display_name: input.display_name } : {}),
      ...(input.email !== undefined ? { email: input.email } : {}),
      updated_at: Date.now(),
    });
    if (input.password) await this.setPassword(row.id, input.password);
    else this.changed(row.id);
    return this.present(await this.mustGet(row.id));
  }

  /** Deletes a user of a lower role; identities, refresh tokens and personal values go with it (cascade). */
  async deleteAs(actor: Principal, userId: number): Promise<void> {
    const row = await this.mustGet(userId);
    if (row.role === Role.SuperAdmin) throw forbidden('user.cannot_delete_super_admin');
    if (row.id === actor.id) throw forbidden('user.cannot_delete_self');
    if (row.role >= actor.role) throw forbidden('user.role_too_high');
    await this.repo.delete(row.id);
    this.changed(row.id);
  }

  /** enable / disable / promote / demote; the rules are in manage-rules.ts. */
  async manageAs(actor: Principal, username: string, action: ManageAction): Promise<PublicUser> {
    const row = await this.repo.byUsername(username);
    if (!row) throw notFound('user.not_found');
    const outcome = manageRule(actor, row, action);
    if ('refused' in outcome) throw outcome.refused;
    await this.repo.update(row.id, { ...outcome.patch, updated_at: Date.now() });
    this.changed(row.id);
    return this.present(await this.mustGet(row.id));
  }

  /** The CLI's reset: a new password, every session of the user ended. */
  async resetPassword(username: string, password: string): Promise<void> {
    const row = await this.repo.byUsername(username);
    if (!row) throw notFound('user.not_found');
    await this.setPassword(row.id, password);
  }

  /** New password hash, auth_version bump (old access tokens die) and every refresh token revoked. */
  private async setPassword(userId: number, password: string): Promise<void> {
    await this.repo.setPassword(userId, await hashPassword(password));
    await this.deps.refreshTokens.revokeAllOf(userId);
    this.changed(userId);
  }

  private async checkRename(row: UserRow, username: string): Promise<void> {
    // bootstrap.ts finds the super admin by this name at every start; renaming it would create a second one.
    if (row.username === SUPER_ADMIN_USERNAME && row.role === Role.SuperAdmin) {
      throw badRequest('user.super_admin_username_fixed', undefined, 'username_fixed');
    }
    if (await this.repo.byUsername(username)) throw conflict('user.username_taken', { username });
  }

  private async mustGet(userId: number): Promise<UserRow> {
    const row = await this.repo.byId(userId);
    if (!row) throw notFound('user.not_found');
    return row;
  }

  private changed(userId: number): void {
    this.deps.events.emit({ type: 'user.changed', userId });
  }

  private async present(row: UserRow): Promise<PublicUser> {
    return toPublicUser(row, await this.repo.identitiesOf([row.id]));
  }

  private async presentAll(rows: UserRow[]): Promise<PublicUser[]> {
    const identities = await this.repo.identitiesOf(rows.map((r) => r.id));
    const of = (userId: number) => identities.filter((i) => i.user_id === userId);
    return rows.map((row) => toPublicUser(row, of(row.id)));
  }
}
