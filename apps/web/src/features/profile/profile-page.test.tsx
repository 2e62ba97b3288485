import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { SelfUser } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { type FakeReply, fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

type Routes = Parameters<typeof fakeApi>[0];

async function openProfile(user: Partial<SelfUser> = {}, routes: Routes = {}, language = 'en') {
  localStorage.setItem('i18nextLng', language);
  storeSession(user);
  const server = fakeApi({ 'GET /api/user/self': () => ok(selfUser(user)), 'GET /api/oauth-server/grants': () => ok([]), ...routes });
  const app = await renderApp('/profile');
  await screen.findByRole('heading', { name: language === 'en' ? 'Profile' : '个人资料' });
  return { server, user: userEvent.setup(), ...app };
}

const card = (title: string) => screen.getByRole('heading', { name: title }).closest('form, div.rounded-lg') as HTMLElement;

describe('profile', () => {
  it.each([
    ['password', 'Signed in with password'],
    ['github', 'Signed in with GitHub'],
    ['google', 'Signed in with Google'],
    ['wechat', 'Signed in with WeChat'],
  ] as const)('shows the %s login method', async (method, text) => {
    await openProfile({ login_method: method });
    expect(await screen.findByTestId('login-method')).toHaveTextContent(text);
  });

  it('password users get the personal info form and the password card', async () => {
    await openProfile();
    expect(await screen.findByLabelText('Username')).toHaveValue('alice');
    expect(screen.getByLabelText('Email')).toHaveValue('alice@example.com');
    expect(screen.getByLabelText('Display name')).toHaveValue('Alice Liddell');
    expect(screen.getByRole('heading', { name: 'Change password' })).toBeInTheDocument();
  });

  it('provider users see their details read-only and no password card', async () => {
    await openProfile({ login_method: 'github', github_id: '42' });
    await screen.findByText('Your sign-in provider manages these details.');
    expect(screen.queryByRole('textbox')).not.toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Change password' })).not.toBeInTheDocument();
    expect(screen.getByText('alice@example.com')).toBeInTheDocument();
  });

  it('saves personal info with PUT /api/user/self and updates the name in the top bar; Cancel restores', async () => {
    const { server, user } = await openProfile(
      {},
      {
        'PUT /api/user/self': (req) => {
          const { token: _key, ...rest } = selfUser(req.body as Partial<SelfUser>);
          return ok(rest);
        },
      },
    );
    const displayName = await screen.findByLabelText('Display name');
    const info = card('Personal information');
    expect(within(info).getByRole('button', { name: 'Save' })).toBeDisabled();

    await user.clear(displayName);
    await user.type(displayName, 'Temporary');
    await user.click(within(info).getByRole('button', { name: 'Cancel' }));
    expect(displayName).toHaveValue('Alice Liddell');

    await user.clear(displayName);
    await user.type(displayName, 'Alice L.');
    await user.click(within(info).getByRole('button', { name: 'Save' }));

    expect(await screen.findByText('Profile updated')).toBeInTheDocument();
    expect(server.callsTo('PUT', '/api/user/self')[0]?.body).toEqual({
      username: 'alice',
      email: 'alice@example.com',
      display_name: 'Alice L.',
    });
    expect(screen.getByTestId('current-user')).toHaveTextContent('Alice L.');
    expect(JSON.parse(localStorage.getItem('user') ?? '{}').display_name).toBe('Alice L.');
  });

  it('a refused update shows its own toast with the server message', async () => {
    const { user } = await openProfile({}, { 'PUT /api/user/self': () => fail(409, 'username bob is taken') });
    const username = await screen.findByLabelText('Username');
    await user.clear(username);
    await user.type(username, 'bob');
    await user.click(within(card('Personal information')).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Could not update your profile')).toBeInTheDocument();
    expect(screen.getByText('username bob is taken')).toBeInTheDocument();
  });

  describe('API key', () => {
    it('is masked until shown', async () => {
      const { user } = await openProfile();
      const key = await screen.findByTestId('api-key');
      expect(key).toHaveTextContent('tp_01234••••••••stuv');
      await user.click(screen.getByRole('button', { name: 'Show API key' }));
      expect(key).toHaveTextContent('tp_0123456789abcdefghijklmnopqrstuv');
      await user.click(screen.getByRole('button', { name: 'Hide API key' }));
      expect(key).toHaveTextContent('tp_01234••••••••stuv');
      expect(screen.getAllByRole('listitem').filter((li) => li.closest('ul.list-disc'))).toHaveLength(3);
    });

    it('refresh asks first, then GET /api/user/token replaces it', async () => {
      const { server, user } = await openProfile({}, { 'GET /api/user/token': () => ok('tp_NEWKEY0000000000000000000000wxyz') });
      await user.click(await screen.findByRole('button', { name: 'Refresh key' }));
      const confirm = await screen.findByRole('alertdialog', { name: 'Replace your API key?' });
      await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
      expect(server.callsTo('GET', '/api/user/token')).toHaveLength(0);
      await waitFor(() => expect(screen.getByRole('button', { name: 'Refresh key' })).toHaveFocus());

      await user.click(screen.getByRole('button', { name: 'Refresh key' }));
      await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Refresh key' }));
      expect(await screen.findByText('API key refreshed')).toBeInTheDocument();
      expect(screen.getByTestId('api-key')).toHaveTextContent('tp_NEWKE••••••••wxyz');
      expect(server.callsTo('GET', '/api/user/token')).toHaveLength(1);
    });

    it('a failed refresh has its own toast', async () => {
      const { user } = await openProfile({}, { 'GET /api/user/token': () => 'network-error' });
      await user.click(await screen.findByRole('button', { name: 'Refresh key' }));
      await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Refresh key' }));
      expect(await screen.findByText('Could not refresh the API key')).toBeInTheDocument();
      expect(screen.getByText('Network error: please check your network connection')).toBeInTheDocument();
    });
  });

  describe('change password', () => {
    async function fill(user: ReturnType<typeof userEvent.setup>, current: string, next: string, confirm: string) {
      if (current) await user.type(screen.getByLabelText('Current password'), current);
      if (next) await user.type(screen.getByLabelText('New password'), next);
      if (confirm) await user.type(screen.getByLabelText('Confirm new password'), confirm);
    }
    const submit = () => screen.getByRole('button', { name: 'Change password' });

    it('stays disabled until all three fields are filled', async () => {
      const { user } = await openProfile();
      await screen.findByLabelText('Current password');
      expect(submit()).toBeDisabled();
      await fill(user, 'old-password', 'new-password', '');
      expect(submit()).toBeDisabled();
      await fill(user, '', '', 'new-password');
      expect(submit()).toBeEnabled();
    });

    it('refuses different new passwords without asking the server', async () => {
      const { server, user } = await openProfile();
      await screen.findByLabelText('Current password');
      await fill(user, 'old-password', 'new-password', 'other-password');
      await user.click(submit());
      expect(await screen.findByRole('alert')).toHaveTextContent('The new passwords do not match.');
      expect(screen.getByLabelText('Confirm new password')).toHaveAttribute('aria-invalid', 'true');
      expect(server.callsTo('POST', '/api/user/change-password')).toHaveLength(0);

      await user.type(screen.getByLabelText('Confirm new password'), 'x');
      expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    });

    it.each([
      [fail(400, 'raw', 'current_password_incorrect'), 'en', 'The current password is incorrect.'],
      [
        fail(400, 'raw', 'oauth_user_cannot_change_password'),
        'en',
        'Accounts that sign in through GitHub or Google have no password to change.',
      ],
      [fail(400, 'new_password: too long'), 'en', 'new_password: too long'],
      [fail(400, 'raw', 'current_password_incorrect'), 'zh-CN', '当前密码不正确。'],
    ] as [FakeReply, string, string][])('maps a refusal to its message (%#)', async (reply, language, message) => {
      const { user } = await openProfile({}, { 'POST /api/user/change-password': () => reply }, language);
      const zh = language === 'zh-CN';
      await user.type(await screen.findByLabelText(zh ? '当前密码' : 'Current password'), 'old-password');
      await user.type(screen.getByLabelText(zh ? '新密码' : 'New password'), 'new-password');
      await user.type(screen.getByLabelText(zh ? '确认新密码' : 'Confirm new password'), 'new-password');
      await user.click(screen.getByRole('button', { name: zh ? '修改密码' : 'Change password' }));
      expect(await screen.findByText(message)).toBeInTheDocument();
      expect(screen.getByText(zh ? '无法修改密码' : 'Could not change the password')).toBeInTheDocument();
      expect(localStorage.getItem('token')).toBe('access-1');
    });

    it('success sends both passwords, signs out and opens the sign-in page', async () => {
      const { server, user, router } = await openProfile({}, { 'POST /api/user/change-password': () => ok() });
      await screen.findByLabelText('Current password');
      await fill(user, 'old-password', 'new-password', 'new-password');
      await user.click(submit());

      expect(await screen.findByText('Password changed')).toBeInTheDocument();
      expect(server.callsTo('POST', '/api/user/change-password')[0]?.body).toEqual({
        current_password: 'old-password',
        new_password: 'new-password',
      });
      await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
      expect(localStorage.getItem('token')).toBeNull();
    });
  });

  it('a failed load shows its own message', async () => {
    localStorage.setItem('i18nextLng', 'en');
    storeSession();
    fakeApi({ 'GET /api/user/self': () => fail(500, 'profile store down') });
    await renderApp('/profile');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load your profile');
    expect(alert).toHaveTextContent('profile store down');
  });

  describe('connected apps', () => {
    const app = (id: number, client: string, grants = 1) => ({
      id,
      client_id: `c${id}`,
      client_name: client,
      resource: 'http://gw.example/proxy/everything/mcp',
      approved_at: Date.UTC(2026, 0, 1),
      last_used_at: null,
      grant_count: grants,
    });

    it('says how many registrations a row stands for, and puts the focus on the next row after a Revoke, then on the list', async () => {
      let listed = [app(1, 'mcp-remote', 6), app(2, 'Claude Code')];
      const { user, server } = await openProfile(
        {},
        {
          'GET /api/oauth-server/grants': () => ok(listed),
          'DELETE /api/oauth-server/grants/1': () => {
            listed = listed.filter((a) => a.id !== 1);
            return ok();
          },
          'DELETE /api/oauth-server/grants/2': () => {
            listed = listed.filter((a) => a.id !== 2);
            return ok();
          },
        },
      );
      const first = await screen.findByRole('listitem', { name: 'mcp-remote' });
      expect(within(first).getByTestId('grant-count')).toHaveTextContent(
        'Registered 6 times (the client registers anew on each start): one row, revoked together',
      );
      expect(within(screen.getByRole('listitem', { name: 'Claude Code' })).queryByTestId('grant-count')).toBeNull();

      await user.click(within(first).getByRole('button', { name: 'Revoke mcp-remote' }));
      const confirm = await screen.findByRole('alertdialog');
      expect(confirm).toHaveTextContent('All 6 of its registrations are revoked.');
      await user.click(within(confirm).getByRole('button', { name: 'Revoke' }));
      await waitFor(() => expect(screen.getByRole('button', { name: 'Revoke Claude Code' })).toHaveFocus());
      expect(server.callsTo('DELETE', '/api/oauth-server/grants/1')).toHaveLength(1);

      await user.click(screen.getByRole('button', { name: 'Revoke Claude Code' }));
      await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Revoke' }));
      await waitFor(() => expect(screen.getByRole('region', { name: 'Connected apps' })).toHaveFocus());
      expect(screen.getByText(/No connected apps/)).toBeInTheDocument();
    });
  });
});
