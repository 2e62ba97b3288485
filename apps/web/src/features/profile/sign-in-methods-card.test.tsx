import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { SelfUser, StatusData } from '@toolport/contract';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { BIND_INTENT_KEY, isBindReturn } from '../../lib/bind-intent';
import { leaveTo } from '../../lib/leave';
import { fail, fakeApi, ok, selfUser, statusData, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

vi.mock('../../lib/leave', () => ({ leaveTo: vi.fn() }));

type Routes = Parameters<typeof fakeApi>[0];

const bothOn: Partial<StatusData> = {
  github_oauth: true,
  github_client_id: 'gh-client',
  google_oauth: true,
  google_client_id: 'gg-client',
};

/** The profile of `user` with the server's status `status`; resolves once the sign-in methods card is there. */
async function openCard(user: Partial<SelfUser> = {}, status: Partial<StatusData> = bothOn, routes: Routes = {}, language = 'en') {
  localStorage.setItem('i18nextLng', language);
  storeSession(user);
  let current = selfUser(user);
  const server = fakeApi({
    'GET /api/status': () => ok(statusData(status)),
    'GET /api/user/self': () => ok(current),
    ...routes,
  });
  await renderApp('/profile');
  const region = await screen.findByRole('region', { name: language === 'en' ? 'Sign-in methods' : '登录方式' });
  return { server, user: userEvent.setup(), region, setSelf: (next: Partial<SelfUser>) => (current = selfUser(next)) };
}

const row = (region: HTMLElement, name: string) => within(region).getByRole('listitem', { name });

describe('sign-in methods card', () => {
  beforeEach(() => vi.mocked(leaveTo).mockClear());

  it('lists the password and each usable provider, not bound, with Bind', async () => {
    const { region } = await openCard();
    const password = row(region, 'Password');
    expect(password).toHaveTextContent('Set');
    expect(within(password).queryByRole('button')).not.toBeInTheDocument();

    for (const name of ['GitHub', 'Google']) {
      const provider = await waitFor(() => row(region, name));
      expect(provider).toHaveTextContent('Not bound');
      expect(provider).toHaveTextContent(`Bind your ${name} account to sign in with it.`);
      expect(within(provider).getByRole('button', { name: `Bind ${name}` })).not.toHaveAttribute('aria-disabled');
    }
  });

  it('shows a bound provider with its account and Unbind', async () => {
    const { region } = await openCard({ github_id: '583231' });
    const github = await waitFor(() => row(region, 'GitHub'));
    expect(github).toHaveTextContent('Bound');
    expect(github).toHaveTextContent('Account 583231');
    expect(within(github).getByRole('button', { name: 'Unbind GitHub' })).not.toHaveAttribute('aria-disabled');
    // Unbound providers are listed once the status says they are offered.
    expect(within(await waitFor(() => row(region, 'Google'))).getByRole('button', { name: 'Bind Google' })).toBeInTheDocument();
  });

  it('leaves out a provider the server does not offer, unless the user is bound to it', async () => {
    const { region } = await openCard({ google_id: 'g-sub-1' }, { github_oauth: true, github_client_id: '', google_oauth: false });
    const google = await waitFor(() => row(region, 'Google'));
    expect(google).toHaveTextContent('Account g-sub-1');
    expect(within(google).getByRole('button', { name: 'Unbind Google' })).not.toHaveAttribute('aria-disabled');
    // Switched on but without a client id: not usable, so not offered.
    expect(within(region).queryByRole('listitem', { name: 'GitHub' })).not.toBeInTheDocument();
    expect(within(region).queryByRole('button', { name: /^Bind/ })).not.toBeInTheDocument();
    expect(within(region).queryByText(/No sign-in provider is available/)).not.toBeInTheDocument();
  });

  it('says so when no provider is available', async () => {
    const { region } = await openCard({}, {});
    expect(
      await within(region).findByText('No sign-in provider is available. An administrator can set up GitHub or Google in Preferences.'),
    ).toBeInTheDocument();
    expect(within(region).getAllByRole('listitem')).toEqual([row(region, 'Password')]);
  });

  it('the last way to sign in cannot be unbound: the button is disabled and says why', async () => {
    const { server, user, region } = await openCard({ login_method: 'github', github_id: '42' });
    expect(within(region).queryByRole('listitem', { name: 'Password' })).not.toBeInTheDocument();
    const unbind = within(await waitFor(() => row(region, 'GitHub'))).getByRole('button', { name: 'Unbind GitHub' });
    expect(unbind).toHaveAttribute('aria-disabled', 'true');
    expect(unbind).toHaveAccessibleDescription('GitHub is your only way to sign in. Bind another provider before unbinding it.');

    await user.click(unbind);
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    expect(server.callsTo('DELETE', '/api/user/bindings/github')).toHaveLength(0);
  });

  it('shows the rows and the last-method reason in Chinese', async () => {
    const { region } = await openCard({ login_method: 'google', google_id: 'g-1' }, bothOn, {}, 'zh-CN');
    const google = await waitFor(() => row(region, 'Google'));
    expect(google).toHaveTextContent('已绑定');
    expect(google).toHaveTextContent('账号 g-1');
    const unbind = within(google).getByRole('button', { name: '解除绑定 Google' });
    expect(unbind).toHaveAttribute('aria-disabled', 'true');
    expect(unbind).toHaveAccessibleDescription('Google 是你唯一的登录方式，请先绑定其他登录方式再解除绑定。');
    const github = await waitFor(() => row(region, 'GitHub'));
    expect(github).toHaveTextContent('未绑定');
    expect(within(github).getByRole('button', { name: '绑定 GitHub' })).toBeInTheDocument();
  });

  it('a provider-only user with two bindings may unbind either', async () => {
    const { region } = await openCard({ login_method: 'github', github_id: '42', google_id: 'g-1' });
    await waitFor(() => row(region, 'Google'));
    for (const name of ['GitHub', 'Google']) {
      expect(within(row(region, name)).getByRole('button', { name: `Unbind ${name}` })).not.toHaveAttribute('aria-disabled');
    }
  });

  it('Bind asks the server to start a bind with the session, then sends the browser to the provider', async () => {
    const authorize = 'https://github.example/login/oauth/authorize?client_id=gh-client&state=st-123&code_challenge=c';
    const { server, user, region } = await openCard({}, bothOn, { 'GET /api/oauth/github/authorize': () => ok({ url: authorize }) });
    await user.click(within(await waitFor(() => row(region, 'GitHub'))).getByRole('button', { name: 'Bind GitHub' }));

    await waitFor(() => expect(leaveTo).toHaveBeenCalledExactlyOnceWith(authorize));
    const [start] = server.callsTo('GET', '/api/oauth/github/authorize');
    expect(start?.url.searchParams.get('bind')).toBe('1');
    expect(start?.url.searchParams.get('redirect')).toBeNull();
    expect(start?.headers.get('Authorization')).toBe('Bearer access-1');
    // The return screen will know this round trip is a bind, and only this one.
    expect(isBindReturn('github', 'st-123')).toBe(true);
    expect(isBindReturn('github', 'another-state')).toBe(false);
    expect(isBindReturn('google', 'st-123')).toBe(false);
    // Busy until the page goes.
    expect(within(row(region, 'Google')).getByRole('button', { name: 'Bind Google' })).toHaveAttribute('aria-disabled', 'true');
  });

  it('a bind that cannot start has its own toast, and the browser stays', async () => {
    const { user, region } = await openCard({}, bothOn, {
      'GET /api/oauth/google/authorize': () =>
        fail(400, 'Google OAuth is not configured, please ask an administrator', 'oauth_not_configured'),
    });
    await user.click(within(await waitFor(() => row(region, 'Google'))).getByRole('button', { name: 'Bind Google' }));
    expect(await screen.findByText('Could not start binding Google')).toBeInTheDocument();
    expect(screen.getByText('Google OAuth is not configured, please ask an administrator')).toBeInTheDocument();
    expect(leaveTo).not.toHaveBeenCalled();
    expect(sessionStorage.getItem(BIND_INTENT_KEY)).toBeNull();
    expect(within(row(region, 'Google')).getByRole('button', { name: 'Bind Google' })).not.toHaveAttribute('aria-disabled');
  });

  it('Unbind asks first; Cancel keeps the binding, Unbind removes it with a toast', async () => {
    const { server, user, region } = await openCard({ github_id: '583231' }, bothOn, {
      'DELETE /api/user/bindings/github': () => {
        const { token: _key, ...updated } = selfUser({ github_id: '' });
        return ok(updated, 'GitHub account unlinked');
      },
    });
    const unbind = () => within(row(region, 'GitHub')).getByRole('button', { name: 'Unbind GitHub' });
    await waitFor(() => row(region, 'GitHub'));

    await user.click(unbind());
    const confirm = await screen.findByRole('alertdialog', { name: 'Unbind GitHub?' });
    expect(confirm).toHaveTextContent('You will no longer be able to sign in with the GitHub account 583231. You can bind it again later.');
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('DELETE', '/api/user/bindings/github')).toHaveLength(0);
    await waitFor(() => expect(unbind()).toHaveFocus());

    await user.click(unbind());
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Unbind' }));
    expect(await screen.findByText('GitHub account unbound')).toBeInTheDocument();
    expect(server.callsTo('DELETE', '/api/user/bindings/github')).toHaveLength(1);
    const github = row(region, 'GitHub');
    expect(github).toHaveTextContent('Not bound');
    expect(within(github).getByRole('button', { name: 'Bind GitHub' })).toBeInTheDocument();
    expect(JSON.parse(localStorage.getItem('user') ?? '{}').github_id).toBe('');
  });

  it('the server refusing to unbind the last method shows its message in a toast, in Chinese', async () => {
    // The card thought there were two methods (the password was removed elsewhere meanwhile).
    const { user, region, setSelf } = await openCard(
      { login_method: 'github', github_id: '42', google_id: 'g-1' },
      bothOn,
      {
        'DELETE /api/user/bindings/google': () =>
          fail(400, 'Google 是该账户唯一的登录方式，无法解除绑定；请先绑定其他登录方式', 'last_sign_in_method'),
      },
      'zh-CN',
    );
    const google = await waitFor(() => row(region, 'Google'));
    setSelf({ login_method: 'google', github_id: '', google_id: 'g-1' });
    await user.click(within(google).getByRole('button', { name: '解除绑定 Google' }));
    const confirm = await screen.findByRole('alertdialog', { name: '要解除绑定 Google 吗？' });
    await user.click(within(confirm).getByRole('button', { name: '解除绑定' }));

    expect(await screen.findByText('无法解除绑定 Google')).toBeInTheDocument();
    expect(screen.getByText('Google 是该账户唯一的登录方式，无法解除绑定；请先绑定其他登录方式')).toBeInTheDocument();
    // The card reloads the server's view: GitHub is gone, Google is now the last method.
    await waitFor(() =>
      expect(within(row(region, 'Google')).getByRole('button', { name: '解除绑定 Google' })).toHaveAttribute('aria-disabled', 'true'),
    );
    expect(row(region, 'GitHub')).toHaveTextContent('未绑定');
  });

  it('a successful unbind in Chinese', async () => {
    const { user, region } = await openCard(
      { google_id: 'g-1' },
      bothOn,
      { 'DELETE /api/user/bindings/google': () => ok(selfUser()) },
      'zh-CN',
    );
    await user.click(within(await waitFor(() => row(region, 'Google'))).getByRole('button', { name: '解除绑定 Google' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: '解除绑定' }));
    expect(await screen.findByText('已解除绑定 Google 账号')).toBeInTheDocument();
  });
});
