import { describe, expect, it } from 'vitest';
import { createUserRequest, editUserRequest, emptyUserForm, roleKindOf, rowActions, type UserForm, validateUserForm } from './user-rules';

const ROOT = { id: 1, role: 100 };
const ADMIN = { id: 2, role: 10 };
const target = (id: number, role: number, status = 1) => ({ id, role, status });

const offered = (actions: ReturnType<typeof rowActions>) =>
  Object.entries(actions)
    .filter(([, on]) => on)
    .map(([name]) => name)
    .sort();

describe('row actions (docs/console.md §4, §6 and the server’s manage rules)', () => {
  it.each([
    ['the super admin on a user', ROOT, target(5, 1), ['edit', 'identities', 'promote', 'remove', 'toggleStatus']],
    ['the super admin on an admin', ROOT, target(5, 10), ['demote', 'edit', 'identities', 'remove', 'toggleStatus']],
    ['the super admin on a disabled admin', ROOT, target(5, 10, 2), ['demote', 'edit', 'identities', 'remove', 'toggleStatus']],
    ['the super admin on an unknown role below admin', ROOT, target(5, 5), ['edit', 'identities', 'promote', 'remove', 'toggleStatus']],
    ['the super admin on themselves', ROOT, target(1, 100), ['edit', 'identities']],
    ['an admin on a user', ADMIN, target(5, 1), ['edit', 'identities', 'remove', 'toggleStatus']],
    ['an admin on a disabled user', ADMIN, target(5, 1, 2), ['edit', 'identities', 'remove', 'toggleStatus']],
    ['an admin on another admin', ADMIN, target(5, 10), []],
    ['an admin on the super admin', ADMIN, target(1, 100), []],
    ['an admin on themselves', ADMIN, target(2, 10), ['edit']],
  ] as const)('%s', (_name, actor, user, expected) => {
    expect(offered(rowActions(actor, user))).toEqual(expected);
  });

  it('never offers promote, demote, disable or delete on a super admin row', () => {
    for (const actor of [ROOT, ADMIN, { id: 3, role: 100 }]) {
      const actions = rowActions(actor, target(1, 100));
      expect([actions.promote, actions.demote, actions.remove]).toEqual([false, false, false]);
      if (actor.id !== 1) expect(actions.toggleStatus).toBe(false);
    }
  });

  it('names the roles 1, 10 and 100, and anything else unknown', () => {
    expect([1, 10, 100, 0, 5, 50].map(roleKindOf)).toEqual(['user', 'admin', 'superAdmin', 'unknown', 'unknown', 'unknown']);
  });
});

const form = (overrides: Partial<UserForm> = {}): UserForm => ({
  username: 'new_user',
  displayName: 'New User',
  email: '',
  password: 'password-1',
  ...overrides,
});

describe('user dialog validation (docs/console.md §5)', () => {
  it('requires a username and a password to add a user', () => {
    expect(validateUserForm(emptyUserForm, 'create')).toEqual({
      username: 'form.errors.usernameRequired',
      password: 'form.errors.passwordRequired',
    });
    expect(validateUserForm(form({ username: '   ' }), 'create')).toEqual({ username: 'form.errors.usernameRequired' });
  });

  it('checks the username’s characters and length as the server does', () => {
    expect(validateUserForm(form({ username: 'has space' }), 'create')).toEqual({ username: 'form.errors.usernameInvalid' });
    expect(validateUserForm(form({ username: 'émile' }), 'create')).toEqual({ username: 'form.errors.usernameInvalid' });
    expect(validateUserForm(form({ username: 'a'.repeat(33) }), 'create')).toEqual({ username: 'form.errors.usernameTooLong' });
    expect(validateUserForm(form({ username: `  ${'a'.repeat(32)}  ` }), 'create')).toEqual({});
    expect(validateUserForm(form({ username: 'Ok_name.with-dash9' }), 'create')).toEqual({});
  });

  it('leaves the fixed username alone when editing, and the password optional', () => {
    expect(validateUserForm(form({ username: 'legacy name!', password: '' }), 'edit')).toEqual({});
    expect(validateUserForm(form({ password: 'short' }), 'edit')).toEqual({ password: 'form.errors.passwordTooShort' });
  });

  it('bounds the password length', () => {
    expect(validateUserForm(form({ password: '1234567' }), 'create')).toEqual({ password: 'form.errors.passwordTooShort' });
    expect(validateUserForm(form({ password: '12345678' }), 'create')).toEqual({});
    expect(validateUserForm(form({ password: 'x'.repeat(129) }), 'create')).toEqual({ password: 'form.errors.passwordTooLong' });
  });

  it('accepts an empty or valid email and refuses a malformed one', () => {
    expect(validateUserForm(form({ email: 'ada@example.com' }), 'create')).toEqual({});
    expect(validateUserForm(form({ email: '  ' }), 'create')).toEqual({});
    for (const email of ['ada', 'ada@', 'ada@example', 'ada example@x.com', 'a@b.c']) {
      expect(validateUserForm(form({ email }), 'create'), email).toEqual({ email: 'form.errors.emailInvalid' });
    }
  });

  it('bounds the display name', () => {
    expect(validateUserForm(form({ displayName: 'x'.repeat(65) }), 'create')).toEqual({ displayName: 'form.errors.displayNameTooLong' });
    expect(validateUserForm(form({ displayName: '' }), 'create')).toEqual({});
  });
});

describe('request bodies (docs/console.md §7)', () => {
  it('POST /user sends the trimmed fields', () => {
    expect(createUserRequest(form({ username: ' bob ', displayName: ' Bob ', email: ' b@x.io ' }))).toEqual({
      username: 'bob',
      display_name: 'Bob',
      email: 'b@x.io',
      password: 'password-1',
    });
  });

  it('PUT /user keeps the username and sends the password only when entered', () => {
    expect(editUserRequest(9, 'bob', form({ username: 'ignored', password: '' }))).toEqual({
      id: 9,
      username: 'bob',
      display_name: 'New User',
      email: '',
    });
    expect(editUserRequest(9, 'bob', form())).toMatchObject({ password: 'password-1' });
  });
});
