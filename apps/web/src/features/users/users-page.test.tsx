import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { PublicUser } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { type FakeReply, type FakeRequest, fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderWithProviders } from '../../test/render';
import { publicUser, usersPage } from './test-fixtures';
import { UsersPage } from './users-page';

const ROOT = publicUser({ id: 1, username: 'root', display_name: 'Root', email: '', role: 100 });
const ADMIN = publicUser({ id: 2, username: 'ada', display_name: 'Ada', role: 10 });
const OTHER_ADMIN = publicUser({ id: 3, username: 'grace', display_name: 'Grace', role: 10 });
const BOB = publicUser({ id: 4, username: 'bob', display_name: 'Bob', github_id: '4242', google_id: 'g-77' });
const CAROL = publicUser({ id: 5, username: 'carol', display_name: '', email: '', status: 2 });

type Routes = Record<string, (req: FakeRequest) => FakeReply | Promise<FakeReply>>;

async function renderPage(me: PublicUser = ROOT, rows: PublicUser[] = [ROOT, ADMIN, OTHER_ADMIN, BOB, CAROL], routes: Routes = {}) {
  storeSession(me);
  const api = fakeApi({ 'GET /api/user/self': () => ok(selfUser(me)), 'GET /api/user/': () => ok(rows), ...routes });
  const user = userEvent.setup();
  await renderWithProviders(<UsersPage />, { path: '/users' });
  return { api, user };
}

/** The row of `username`, once it is there: the previous list stays on screen while the next one loads. */
const row = (username: string) =>
  waitFor(() => {
    const found = screen.getAllByTestId('user-row').find((r) => r.dataset.username === username);
    if (!found) throw new Error(`no row for ${username}`);
    return found;
  });

/** The names of the buttons a row offers, and whether its status switch can be flipped. */
async function offered(username: string) {
  const r = await row(username);
  return {
    buttons: within(r)
      .queryAllByRole('button')
      .map((b) => b.getAttribute('aria-label') ?? b.textContent),
    switchEnabled: within(r).getByRole('switch').hasAttribute('disabled') === false,
  };
}

describe('users page: the table (docs/console.md §2.14)', () => {
  it('shows id, username, display name, email or "-", role badge, bindings and status', async () => {
    await renderPage();
    for (const column of ['ID', 'Username', 'Display name', 'Email', 'Role', 'Bindings', 'Status', 'Actions']) {
      expect(await screen.findByRole('columnheader', { name: column })).toBeInTheDocument();
    }
    const bob = await row('bob');
    expect(within(bob).getByText('4')).toBeInTheDocument();
    expect(within(bob).getByText('Bob')).toBeInTheDocument();
    expect(within(bob).getByText('user4@example.com')).toBeInTheDocument();
    expect(within(bob).getByText('User')).toBeInTheDocument();
    expect(within(bob).getByRole('img', { name: 'GitHub account 4242' })).toBeInTheDocument();
    expect(within(bob).getByRole('img', { name: 'Google account g-77' })).toBeInTheDocument();
    expect(within(bob).getByRole('switch', { name: 'Enable bob' })).toBeChecked();
    expect(within(bob).getByText('Enabled')).toBeInTheDocument();

    const carol = await row('carol');
    expect(within(carol).getAllByText('-')).toHaveLength(3); // display name, email, bindings
    expect(within(carol).getByText('No linked accounts')).toBeInTheDocument();
    expect(within(carol).getByRole('switch')).not.toBeChecked();
    expect(within(carol).getByText('Disabled')).toBeInTheDocument();

    expect(within(await row('root')).getByText('Super admin')).toBeInTheDocument();
    expect(within(await row('root')).getByText('You')).toBeInTheDocument();
    expect(within(await row('ada')).getByText('Admin')).toBeInTheDocument();
    expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 5 users');
  });

  it('calls an unknown role unknown', async () => {
    await renderPage(ROOT, [ROOT, publicUser({ id: 9, username: 'odd', role: 50 })]);
    expect(within(await row('odd')).getByText('Unknown')).toBeInTheDocument();
  });

  it('shows grey rows while loading, then the users', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    await renderPage(ROOT, [BOB], {
      'GET /api/user/': async () => {
        await gate;
        return ok([BOB]);
      },
    });
    expect(document.querySelectorAll('.animate-pulse').length).toBeGreaterThan(0);
    expect(screen.queryByTestId('user-row')).not.toBeInTheDocument();
    release();
    expect(await row('bob')).toBeInTheDocument();
    expect(document.querySelectorAll('.animate-pulse')).toHaveLength(0);
  });

  it('says so when a page is empty', async () => {
    await renderPage(ROOT, []);
    expect(await screen.findByText('No users on this page')).toBeInTheDocument();
    expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 0 users');
    expect(screen.getByRole('button', { name: /Next/ })).toBeDisabled();
  });

  it('a failed load shows an error with a retry, and the list-load toast with the reason', async () => {
    let calls = 0;
    const { user } = await renderPage(ROOT, [], {
      'GET /api/user/': () => {
        calls += 1;
        return calls === 1 ? 'network-error' : ok([BOB]);
      },
    });
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load the users');
    expect(alert).toHaveTextContent('Network error: please check your network connection');
    expect(await screen.findByText('Could not load the users', { selector: '[data-title]' })).toBeInTheDocument();
    await user.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await row('bob')).toBeInTheDocument();
  });

  it('a refused load toasts the server’s message', async () => {
    await renderPage(ROOT, [], { 'GET /api/user/': () => fail(400, 'page out of range') });
    expect(await screen.findByText('Could not load the users', { selector: '[data-title]' })).toBeInTheDocument();
    expect(screen.getAllByText('page out of range').length).toBeGreaterThan(0);
  });
});

describe('users page: paging and search (docs/console.md §2.14, §9)', () => {
  it('pages ten at a time: next is disabled on a short page, previous on the first', async () => {
    const { api, user } = await renderPage(ROOT, [], {
      'GET /api/user/': (req) => ok(req.url.searchParams.get('p') === '1' ? usersPage(3, 50) : usersPage(10)),
    });
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
    expect(screen.getByText('Page 1')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /Previous/ })).toBeDisabled();

    await user.click(screen.getByRole('button', { name: /Next/ }));
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 3 users'));
    expect(screen.getByText('Page 2')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /Next/ })).toBeDisabled();
    expect(api.callsTo('GET', '/api/user/').map((c) => c.url.searchParams.get('p'))).toEqual(['0', '1']);

    await user.click(screen.getByRole('button', { name: /Previous/ }));
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
  });

  it('a later page that fails to load still offers Previous', async () => {
    const { user } = await renderPage(ROOT, [], {
      'GET /api/user/': (req) => (req.url.searchParams.get('p') === '1' ? fail(400, 'page out of range') : ok(usersPage(10))),
    });
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
    await user.click(screen.getByRole('button', { name: /Next/ }));
    expect(await screen.findByRole('alert')).toHaveTextContent('page out of range');
    await user.click(screen.getByRole('button', { name: /Previous/ }));
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('searches on Enter and with the button, without paging; an empty term goes back to the list', async () => {
    const { api, user } = await renderPage(ROOT, usersPage(10), {
      'GET /api/user/search': (req) => ok(req.url.searchParams.get('keyword') === 'bob' ? [BOB] : []),
    });
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
    const box = screen.getByRole('searchbox', { name: 'Search users' });

    await user.type(box, ' bob {Enter}');
    expect(await row('bob')).toBeInTheDocument();
    expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 1 user');
    expect(screen.queryByRole('button', { name: /Next/ })).not.toBeInTheDocument();
    expect(api.callsTo('GET', '/api/user/search')[0]?.url.searchParams.get('keyword')).toBe('bob');

    await user.clear(box);
    await user.type(box, 'zzz');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    expect(await screen.findByText('No users match “zzz”')).toBeInTheDocument();

    await user.clear(box);
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
    expect(screen.getByRole('button', { name: /Next/ })).toBeEnabled();
  });

  it('Clear search empties the box and shows the list again', async () => {
    const { user } = await renderPage(ROOT, usersPage(2), { 'GET /api/user/search': () => ok([BOB]) });
    await user.type(await screen.findByRole('searchbox'), 'bob{Enter}');
    expect(await row('bob')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Clear search' }));
    expect(screen.getByRole('searchbox')).toHaveValue('');
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 2 users'));
  });
});

describe('users page: what each administrator is offered (docs/console.md §4, §6)', () => {
  it('the super admin: promote users, demote admins, nothing but edit on their own row', async () => {
    await renderPage(ROOT);
    expect(await offered('bob')).toEqual({
      buttons: ['Promote bob to administrator', 'Connected apps of bob', 'Sign-in identities of bob', 'Edit bob', 'Delete bob'],
      switchEnabled: true,
    });
    expect(await offered('ada')).toEqual({
      buttons: ['Demote ada to user', 'Connected apps of ada', 'Sign-in identities of ada', 'Edit ada', 'Delete ada'],
      switchEnabled: true,
    });
    expect(await offered('carol')).toEqual({
      buttons: ['Promote carol to administrator', 'Connected apps of carol', 'Sign-in identities of carol', 'Edit carol', 'Delete carol'],
      switchEnabled: true,
    });
    expect(await offered('root')).toEqual({
      buttons: ['Connected apps of root', 'Sign-in identities of root', 'Edit root'],
      switchEnabled: false,
    });
  });

  it('an admin: no role changes, nothing on fellow admins or the super admin, only edit on themselves', async () => {
    await renderPage(ADMIN);
    expect(await offered('bob')).toEqual({
      buttons: ['Connected apps of bob', 'Sign-in identities of bob', 'Edit bob', 'Delete bob'],
      switchEnabled: true,
    });
    expect(await offered('grace')).toEqual({ buttons: [], switchEnabled: false });
    expect(await offered('root')).toEqual({ buttons: [], switchEnabled: false });
    expect(await offered('ada')).toEqual({ buttons: ['Connected apps of ada', 'Edit ada'], switchEnabled: false });
    expect(within(await row('grace')).getByText('No actions available')).toBeInTheDocument();
  });
});

describe('users page: actions (docs/console.md §4, §7, §8)', () => {
  /** A tiny server keeping the users: GET lists them, POST /user/manage changes one as the real one does. */
  function usersServer(initial: PublicUser[] = [ROOT, ADMIN, OTHER_ADMIN, BOB, CAROL]): Routes {
    let rows = initial;
    const changes: Record<string, Partial<PublicUser>> = {
      enable: { status: 1 },
      disable: { status: 2 },
      promote: { role: 10 },
      demote: { role: 1 },
    };
    return {
      'GET /api/user/': () => ok(rows),
      'POST /api/user/manage': (req) => {
        const { username, action } = req.body as { username: string; action: string };
        rows = rows.map((u) => (u.username === username ? { ...u, ...changes[action] } : u));
        return ok(rows.find((u) => u.username === username));
      },
    };
  }

  it('the status switch disables an enabled user and enables a disabled one', async () => {
    const { api, user } = await renderPage(ROOT, undefined, usersServer());
    await user.click(within(await row('bob')).getByRole('switch'));
    // Disabling asks first; cancelling changes nothing.
    const ask = await screen.findByRole('alertdialog', { name: 'Disable this user?' });
    await user.click(within(ask).getByRole('button', { name: 'Cancel' }));
    expect(api.callsTo('POST', '/api/user/manage')).toHaveLength(0);
    expect(within(await row('bob')).getByRole('switch')).toBeChecked();
    await user.click(within(await row('bob')).getByRole('switch'));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Disable' }));
    expect(await screen.findByText('User disabled')).toBeInTheDocument();
    expect(screen.getByText('Bob can no longer sign in; their sessions end at their next request.')).toBeInTheDocument();
    await waitFor(async () => expect(within(await row('bob')).getByRole('switch')).not.toBeChecked());

    await user.click(within(await row('carol')).getByRole('switch'));
    expect(await screen.findByText('User enabled')).toBeInTheDocument();
    await waitFor(async () => expect(within(await row('carol')).getByRole('switch')).toBeChecked());
    expect(api.callsTo('POST', '/api/user/manage').map((c) => c.body)).toEqual([
      { username: 'bob', action: 'disable' },
      { username: 'carol', action: 'enable' },
    ]);
  });

  it('promote and demote call POST /user/manage and say what happened', async () => {
    const { api, user } = await renderPage(ROOT, undefined, usersServer());
    await user.click(within(await row('bob')).getByRole('button', { name: 'Promote bob to administrator' }));
    const ask = await screen.findByRole('alertdialog', { name: 'Promote to administrator?' });
    expect(ask).toHaveTextContent('Bob will see and change every service, user, log and setting.');
    await user.click(within(ask).getByRole('button', { name: 'Promote' }));
    expect(await screen.findByText('Promoted to administrator')).toBeInTheDocument();
    expect(screen.getByText('Bob is now an administrator.')).toBeInTheDocument();
    // Now an admin: the badge and the offered action follow.
    expect(await within(await row('bob')).findByRole('button', { name: 'Demote bob to user' })).toBeInTheDocument();
    expect(within(await row('bob')).getByText('Admin')).toBeInTheDocument();
    await user.click(within(await row('ada')).getByRole('button', { name: 'Demote ada to user' }));
    expect(await screen.findByText('Demoted to user')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/user/manage').map((c) => c.body)).toEqual([
      { username: 'bob', action: 'promote' },
      { username: 'ada', action: 'demote' },
    ]);
  });

  it('a refused operation toasts "Operation failed" with the server’s message', async () => {
    const { user } = await renderPage(ROOT, undefined, {
      'POST /api/user/manage': () => fail(400, 'Only ordinary users can be promoted to administrator'),
    });
    await user.click(within(await row('bob')).getByRole('button', { name: 'Promote bob to administrator' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Promote' }));
    expect(await screen.findByText('Operation failed')).toBeInTheDocument();
    expect(screen.getByText('Only ordinary users can be promoted to administrator')).toBeInTheDocument();
  });

  it.each([
    ['a lost connection', (): FakeReply => 'network-error', 'Operation failed', 'Network error: please check your network connection'],
    ['a refusal without a message', () => fail(409), 'Operation failed', 'Unknown error'],
    [
      'a 403',
      () => fail(403, 'role too high'),
      'Permission denied',
      'Permission denied: you do not have permission to perform this action',
    ],
    ['a 500', () => fail(500, 'boom'), 'Server error', 'Server error, please retry later'],
  ])('%s on the status switch shows one toast', async (_name, reply, title, description) => {
    const { user } = await renderPage(ROOT, undefined, { 'POST /api/user/manage': reply });
    await user.click(within(await row('bob')).getByRole('switch'));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Disable' }));
    expect(await screen.findByText(title)).toBeInTheDocument();
    expect(screen.getByText(description)).toBeInTheDocument();
    expect(within(await row('bob')).getByRole('switch')).toBeChecked();
  });

  it('delete asks first; Cancel leaves the user, Delete removes them', async () => {
    let rows = [ROOT, BOB];
    const { api, user } = await renderPage(ROOT, undefined, {
      'GET /api/user/': () => ok(rows),
      'DELETE /api/user/4': () => {
        rows = [ROOT];
        return ok(undefined, 'User deleted');
      },
    });
    await user.click(within(await row('bob')).getByRole('button', { name: 'Delete bob' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Delete user' });
    expect(confirm).toHaveTextContent('Are you sure you want to delete Bob? This action cannot be undone.');
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(api.callsTo('DELETE', '/api/user/4')).toHaveLength(0);
    await waitFor(() => expect(screen.getByRole('button', { name: 'Delete bob' })).toHaveFocus());

    await user.click(screen.getByRole('button', { name: 'Delete bob' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('User deleted')).toBeInTheDocument();
    expect(screen.getByText('Bob has been deleted.')).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('user-row')).toHaveLength(1));
    expect(api.callsTo('DELETE', '/api/user/4')).toHaveLength(1);
  });

  it('a failed delete toasts "Delete failed" with the server’s message and keeps the row', async () => {
    const { user } = await renderPage(ROOT, undefined, { 'DELETE /api/user/4': () => fail(404, 'User not found') });
    await user.click(within(await row('bob')).getByRole('button', { name: 'Delete bob' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('Delete failed')).toBeInTheDocument();
    expect(screen.getByText('User not found')).toBeInTheDocument();
    expect(await row('bob')).toBeInTheDocument();
  });

  it('deleting the last user of a later page goes back a page', async () => {
    const pages: Record<string, PublicUser[]> = { '0': usersPage(10), '1': [BOB] };
    const { user } = await renderPage(ROOT, undefined, {
      'GET /api/user/': (req) => ok(pages[req.url.searchParams.get('p') ?? '0'] ?? []),
      'DELETE /api/user/4': () => {
        pages['1'] = [];
        return ok();
      },
    });
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
    await user.click(screen.getByRole('button', { name: /Next/ }));
    await user.click(within(await row('bob')).getByRole('button', { name: 'Delete bob' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(screen.getByText('Page 1')).toBeInTheDocument());
    await waitFor(() => expect(screen.getByTestId('users-count')).toHaveTextContent('Showing 10 users'));
  });
});

describe('users page: add and edit dialog (docs/console.md §5)', () => {
  const dialog = () => screen.getByRole('dialog');
  const field = (label: string) => within(dialog()).getByLabelText(label);

  it('shows every field error at once, clears one on edit, and sends nothing while invalid', async () => {
    const { api, user } = await renderPage();
    await user.click(await screen.findByRole('button', { name: 'Add user' }));
    expect(await screen.findByRole('dialog', { name: 'Add user' })).toBeInTheDocument();
    await user.click(within(dialog()).getByRole('button', { name: 'Create' }));
    expect(await within(dialog()).findByText('Username cannot be empty')).toBeInTheDocument();
    expect(within(dialog()).getByText('Password cannot be empty')).toBeInTheDocument();
    expect(field('Username')).toHaveAttribute('aria-invalid', 'true');

    await user.type(field('Username'), 'x');
    expect(within(dialog()).queryByText('Username cannot be empty')).not.toBeInTheDocument();
    expect(within(dialog()).getByText('Password cannot be empty')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/user')).toHaveLength(0);
  });

  it.each([
    ['Username', 'has space', 'The username may contain only letters, digits, _ . -'],
    ['Username', 'a'.repeat(33), 'The username can have at most 32 characters'],
    ['Display name', 'd'.repeat(65), 'The display name can have at most 64 characters'],
    ['Email', 'not-an-email', 'Please enter a valid email address'],
    ['Password', 'short', 'The password must have at least 8 characters'],
  ])('refuses a bad %s (%s)', async (label, value, message) => {
    const { api, user } = await renderPage();
    await user.click(await screen.findByRole('button', { name: 'Add user' }));
    await screen.findByRole('dialog');
    const valid: Record<string, string> = { Username: 'new_user', Password: 'password-1' };
    for (const [name, text] of Object.entries({ ...valid, [label]: value })) {
      await user.click(field(name));
      await user.paste(text);
    }
    await user.click(within(dialog()).getByRole('button', { name: 'Create' }));
    expect(await within(dialog()).findByText(message)).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/user')).toHaveLength(0);
  });

  it('adds a user with POST /user, toasts and closes', async () => {
    const created = publicUser({ id: 77, username: 'new_user', display_name: 'New User' });
    const { api, user } = await renderPage(ROOT, [ROOT], {
      'POST /api/user': () => ({ status: 201, body: { success: true, data: created } }),
    });
    await user.click(await screen.findByRole('button', { name: 'Add user' }));
    await screen.findByRole('dialog');
    await user.type(field('Username'), ' new_user ');
    await user.type(field('Display name'), 'New User');
    await user.type(field('Email'), 'new@example.com');
    await user.type(field('Password'), 'password-1');
    await user.click(within(dialog()).getByRole('button', { name: 'Create' }));
    expect(await screen.findByText('User created')).toBeInTheDocument();
    expect(screen.getByText('New User has been saved.')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(api.callsTo('POST', '/api/user')[0]?.body).toEqual({
      username: 'new_user',
      display_name: 'New User',
      email: 'new@example.com',
      password: 'password-1',
    });
    expect(api.callsTo('GET', '/api/user/').length).toBeGreaterThan(1);
  });

  it('a refused create keeps the dialog open and toasts the server’s message', async () => {
    const { user } = await renderPage(ROOT, [ROOT], { 'POST /api/user': () => fail(409, 'The username "bob" is already taken') });
    await user.click(await screen.findByRole('button', { name: 'Add user' }));
    await screen.findByRole('dialog');
    await user.type(field('Username'), 'bob');
    await user.type(field('Password'), 'password-1');
    await user.click(within(dialog()).getByRole('button', { name: 'Create' }));
    expect(await screen.findByText('Could not create the user')).toBeInTheDocument();
    expect(screen.getByText('The username "bob" is already taken')).toBeInTheDocument();
    expect(dialog()).toBeInTheDocument();
    expect(field('Username')).toHaveValue('bob');
  });

  it('edits with the username fixed and sends the password only when entered', async () => {
    const { api, user } = await renderPage(ROOT, undefined, {
      'PUT /api/user': (req) => ok({ ...BOB, display_name: (req.body as { display_name: string }).display_name }),
    });
    await user.click(within(await row('bob')).getByRole('button', { name: 'Edit bob' }));
    expect(await screen.findByRole('dialog', { name: 'Edit user' })).toHaveTextContent('Change the details of Bob.');
    expect(field('Username')).toHaveValue('bob');
    expect(field('Username')).toHaveAttribute('readonly');
    expect(field('Display name')).toHaveValue('Bob');
    expect(field('Email')).toHaveValue('user4@example.com');
    expect(field('Password')).toHaveValue('');

    await user.clear(field('Display name'));
    await user.type(field('Display name'), 'Robert');
    await user.click(within(dialog()).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('User updated')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());

    await user.click(within(await row('bob')).getByRole('button', { name: 'Edit bob' }));
    await screen.findByRole('dialog');
    await user.type(field('Password'), 'short');
    await user.click(within(dialog()).getByRole('button', { name: 'Save' }));
    expect(await within(dialog()).findByText('The password must have at least 8 characters')).toBeInTheDocument();
    await user.type(field('Password'), '-but-now-long');
    await user.click(within(dialog()).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/user')).toHaveLength(2));

    expect(api.callsTo('PUT', '/api/user').map((c) => c.body)).toEqual([
      { id: 4, username: 'bob', display_name: 'Robert', email: 'user4@example.com' },
      { id: 4, username: 'bob', display_name: 'Bob', email: 'user4@example.com', password: 'short-but-now-long' },
    ]);
  });

  it('a refused edit toasts "Could not update the user"', async () => {
    const { user } = await renderPage(ROOT, undefined, { 'PUT /api/user': () => fail(400, 'A username cannot be changed here') });
    await user.click(within(await row('bob')).getByRole('button', { name: 'Edit bob' }));
    await screen.findByRole('dialog');
    await user.click(within(dialog()).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Could not update the user')).toBeInTheDocument();
    expect(screen.getByText('A username cannot be changed here')).toBeInTheDocument();
  });
});

describe('users page in Chinese', () => {
  it('shows the table, paging text and role badges in zh-CN', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    await renderPage(ROOT, [ROOT, BOB]);
    expect(await screen.findByRole('heading', { name: '用户' })).toBeInTheDocument();
    expect(await screen.findByTestId('users-count')).toHaveTextContent('显示 2 个用户');
    expect(within(await row('root')).getByText('超级管理员')).toBeInTheDocument();
    expect(within(await row('bob')).getByRole('button', { name: '将 bob 提升为管理员' })).toBeInTheDocument();
  });
});

describe('users page: a user’s connected apps (issue 18)', () => {
  it('lists the MCP clients a user allowed and revokes one after asking', async () => {
    const apps = [
      {
        id: 7,
        client_id: 'tpc_x',
        client_name: 'Cursor',
        resource: 'https://mcp.example.com/proxy/time/mcp',
        approved_at: 1_700_000_000_000,
        last_used_at: null,
      },
    ];
    const { user, api } = await renderPage(ROOT, [ROOT, BOB], {
      'GET /api/oauth-server/users/4/grants': () => ok([...apps]),
      'DELETE /api/oauth-server/users/4/grants/7': () => {
        apps.length = 0;
        return ok(undefined, 'App access revoked');
      },
    });
    await user.click(within(await row('bob')).getByRole('button', { name: 'Connected apps of bob' }));
    const dialog = await screen.findByRole('dialog', { name: 'Connected apps of Bob' });
    expect(await within(dialog).findByText('Cursor')).toBeInTheDocument();
    expect(within(dialog).getByText('/proxy/time/mcp')).toBeInTheDocument();
    expect(within(dialog).getByText(/Not used yet/)).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Revoke Cursor' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(api.callsTo('DELETE', '/api/oauth-server/users/4/grants/7')).toHaveLength(1));
    expect(await within(screen.getByRole('dialog', { name: 'Connected apps of Bob' })).findByText(/No connected apps/)).toBeInTheDocument();
  });
});
