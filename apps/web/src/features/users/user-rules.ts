import {
  MAX_DISPLAY_NAME_LENGTH,
  MAX_EMAIL_LENGTH,
  MAX_PASSWORD_LENGTH,
  MAX_USERNAME_LENGTH,
  MIN_PASSWORD_LENGTH,
  type PublicUser,
  USERS_PAGE_SIZE,
  UserStatus,
} from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { ADMIN_ROLE, SUPER_ADMIN_ROLE } from '../../lib/roles';

/**
 * The Users screen's rules (docs/console.md §2.14, §4, §5, §6, §9), kept apart from the components so every
 * combination is easy to test. The limits are the server's, from the contract.
 */

export { MAX_DISPLAY_NAME_LENGTH, MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH, MAX_USERNAME_LENGTH, MIN_PASSWORD_LENGTH, USERS_PAGE_SIZE };

export const USER_STATUS_ENABLED = UserStatus.Enabled;

export type RoleKind = 'user' | 'admin' | 'superAdmin' | 'unknown';

/** Role numbers of docs/console.md §3: 1 user, 10 admin, 100 super admin, anything else unknown. */
export function roleKindOf(role: number): RoleKind {
  if (role === 1) return 'user';
  if (role === ADMIN_ROLE) return 'admin';
  if (role === SUPER_ADMIN_ROLE) return 'superAdmin';
  return 'unknown';
}

export const isEnabled = (user: Pick<PublicUser, 'status'>): boolean => user.status === USER_STATUS_ENABLED;

export type ManageAction = 'enable' | 'disable' | 'promote' | 'demote';

/** What the signed-in administrator is offered for one row. */
export interface RowActions {
  edit: boolean;
  promote: boolean;
  demote: boolean;
  /** The status switch may be flipped (to disabled when enabled, to enabled otherwise). */
  toggleStatus: boolean;
  remove: boolean;
  /** Link and unlink sign-in identities (decision 0063): the super admin on anyone, an admin on lower roles. */
  identities: boolean;
}

interface Actor {
  id: number;
  role: number;
}

/**
 * The rules of docs/console.md (§4, §6: promote when role < 10, demote when role is exactly 10, no role change, disable
 * or delete for the super admin) narrowed by what the server allows (apps/server/.../manage-rules.ts and
 * UsersService): an administrator acts only on users of a lower role, or edits themselves; role changes
 * belong to the super admin; nobody disables or deletes their own account.
 */
export function rowActions(actor: Actor, target: Pick<PublicUser, 'id' | 'role' | 'status'>): RowActions {
  const self = actor.id === target.id;
  const outranks = target.role < actor.role;
  const superAdminTarget = target.role === SUPER_ADMIN_ROLE;
  const superAdminActor = actor.role === SUPER_ADMIN_ROLE;
  const enabled = isEnabled(target);
  return {
    edit: self || outranks,
    promote: superAdminActor && !superAdminTarget && target.role < ADMIN_ROLE,
    demote: superAdminActor && target.role === ADMIN_ROLE,
    toggleStatus: enabled ? !self && !superAdminTarget && outranks : self || outranks,
    remove: !self && !superAdminTarget && outranks,
    identities: superAdminActor || outranks,
  };
}

/** The user dialog's fields (docs/console.md §2.14, §7 POST and PUT /user). */
export interface UserForm {
  username: string;
  displayName: string;
  email: string;
  password: string;
}

export const emptyUserForm: UserForm = { username: '', displayName: '', email: '', password: '' };

export const userFormOf = (user: PublicUser): UserForm => ({
  username: user.username,
  displayName: user.display_name,
  email: user.email,
  password: '',
});

export type UserDialogMode = 'create' | 'edit';

/** Field errors as keys of the users namespace, so they follow a language change while shown. */
export type UserFormErrors = Partial<Record<keyof UserForm, ParseKeys<'users'>>>;

const USERNAME_PATTERN = /^[A-Za-z0-9_.-]+$/;
// What the server's email check (zod) accepts: dot-separated local words, host labels, a top-level domain of 2+ letters.
const EMAIL_PATTERN = /^[A-Za-z0-9_'+-]+(?:\.[A-Za-z0-9_'+-]+)*@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;

function passwordError(password: string, required: boolean): ParseKeys<'users'> | undefined {
  if (!password) return required ? 'form.errors.passwordRequired' : undefined;
  if (password.length < MIN_PASSWORD_LENGTH) return 'form.errors.passwordTooShort';
  if (password.length > MAX_PASSWORD_LENGTH) return 'form.errors.passwordTooLong';
  return undefined;
}

/**
 * docs/console.md §5 "User dialog": the username is fixed when editing (so it is checked only on create), the
 * password is required on create and optional when editing. The lengths and characters are the server's
 * (CreateUserRequest), checked here so the dialog answers before a round trip.
 */
export function validateUserForm(form: UserForm, mode: UserDialogMode): UserFormErrors {
  const errors: UserFormErrors = {};
  if (mode === 'create') {
    const username = form.username.trim();
    if (!username) errors.username = 'form.errors.usernameRequired';
    else if (username.length > MAX_USERNAME_LENGTH) errors.username = 'form.errors.usernameTooLong';
    else if (!USERNAME_PATTERN.test(username)) errors.username = 'form.errors.usernameInvalid';
  }
  if (form.displayName.trim().length > MAX_DISPLAY_NAME_LENGTH) errors.displayName = 'form.errors.displayNameTooLong';
  const email = form.email.trim();
  if (email && (email.length > MAX_EMAIL_LENGTH || !EMAIL_PATTERN.test(email))) errors.email = 'form.errors.emailInvalid';
  const password = passwordError(form.password, mode === 'create');
  if (password) errors.password = password;
  return errors;
}

export const hasErrors = (errors: UserFormErrors): boolean => Object.keys(errors).length > 0;

/** The body of POST /user. */
export function createUserRequest(form: UserForm) {
  return {
    username: form.username.trim(),
    display_name: form.displayName.trim(),
    email: form.email.trim(),
    password: form.password,
  };
}

/** The body of PUT /user: the username as it is (fixed), the password only when one was entered (§5). */
export function editUserRequest(id: number, username: string, form: UserForm) {
  return {
    id,
    username,
    display_name: form.displayName.trim(),
    email: form.email.trim(),
    ...(form.password ? { password: form.password } : {}),
  };
}
