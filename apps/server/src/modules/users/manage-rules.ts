import { type ManageUserRequest, Role, UserStatus } from '@toolport/contract';
import type { UserUpdate } from '../../db/schema.js';
import { type AppError, badRequest, forbidden } from '../../http/errors.js';

export type ManageAction = ManageUserRequest['action'];

interface Actor {
  id: number;
  role: number;
}

interface Target {
  id: number;
  role: number;
}

export type ManageOutcome = { patch: Pick<UserUpdate, 'role' | 'status'> } | { refused: AppError };

/**
 * What `POST /user/manage` may do, as a pure function so every combination is easy to test.
 *
 * - enable: a user of lower role than the caller, or the caller themselves (a no-op).
 * - disable: never the super admin, never oneself, only a user of lower role.
 * - promote (role < 10 → 10) and demote (role exactly 10 → 1): the super admin only. An admin
 *   could otherwise demote a fellow admin (or themselves, leaving nobody to undo it); the safe
 *   rule is that role changes belong to the one account that cannot itself be demoted.
 */
export function manageRule(actor: Actor, target: Target, action: ManageAction): ManageOutcome {
  const self = actor.id === target.id;
  const refuse = (err: AppError): ManageOutcome => ({ refused: err });
  switch (action) {
    case 'enable':
      if (!self && target.role >= actor.role) return refuse(forbidden('user.role_too_high'));
      return { patch: { status: UserStatus.Enabled } };
    case 'disable':
      if (target.role === Role.SuperAdmin) return refuse(forbidden('user.cannot_disable_super_admin'));
      if (self) return refuse(forbidden('user.cannot_disable_self'));
      if (target.role >= actor.role) return refuse(forbidden('user.role_too_high'));
      return { patch: { status: UserStatus.Disabled } };
    case 'promote':
      if (actor.role !== Role.SuperAdmin) return refuse(forbidden('user.promote_requires_super_admin'));
      if (target.role >= Role.Admin) return refuse(badRequest('user.cannot_promote', undefined, 'cannot_promote'));
      return { patch: { role: Role.Admin } };
    case 'demote':
      if (actor.role !== Role.SuperAdmin) return refuse(forbidden('user.demote_requires_super_admin'));
      if (target.role !== Role.Admin) return refuse(badRequest('user.cannot_demote', undefined, 'cannot_demote'));
      return { patch: { role: Role.User } };
  }
}

/**
 * Whether an administrator may change how another account signs in (link or unlink a provider identity,
 * decision 0063): the super admin on anyone, an admin only on users of a lower role (so not on themselves,
 * nor on a fellow admin).
 */
export function mayChangeSignIn(actor: Actor, target: Target): boolean {
  return actor.role === Role.SuperAdmin || target.role < actor.role;
}
