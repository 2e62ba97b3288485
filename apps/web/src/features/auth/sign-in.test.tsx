import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { leaveTo } from '../../lib/leave';
import { fail, fakeApi, ok, selfUser, statusData } from '../../test/fake-api';
import { renderApp } from '../../test/render';

vi.mock('../../lib/leave', () => ({ leaveTo: vi.fn() }));

const grant = (username = 'alice') => {
  const { token: _apiKey, ...user } = selfUser({ username });
  return { access_token: 'access-new', refresh_token: 'refresh-new', expires_in: 900, user };
};

async function openLoginPage(language: 'en' | 'zh-CN' = 'en') {
  localStorage.setItem('i18nextLng', language);
  const user = userEvent.setup();
  const app = await renderApp('/login');
  await screen.findByRole('heading', { name: language === 'en' ? 'Sign in to Toolport' : '登录 Toolport' });
  return { user, ...app };
}

describe('sign-in form', () => {
  it('focuses the username and shows the heading, subtitle, providers and divider', async () => {
    fakeApi();
    await openLoginPage();
    expect(screen.getByLabelText('Username')).toHaveFocus();
    expect(screen.getByText('Welcome back! Please sign in to continue')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Continue with GitHub' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Continue with Google' })).toBeInTheDocument();
    expect(screen.getByText('or')).toBeInTheDocument();
  });

  it.each([
    ['', ''],
    ['alice', ''],
    ['', 'secret'],
    ['   ', 'secret'],
  ])('refuses username %j with password %j: toast 输入错误, no request', async (username, password) => {
    const server = fakeApi();
    const { user } = await openLoginPage('zh-CN');
    if (username) await user.type(screen.getByLabelText('用户名'), username);
    if (password) await user.type(screen.getByLabelText('密码'), password);
    await user.click(screen.getByRole('button', { name: '继续' }));

    expect(await screen.findByText('输入错误')).toBeInTheDocument();
    expect(screen.getByText('用户名和密码不能为空。')).toBeInTheDocument();
    expect(server.callsTo('POST', '/api/auth/login')).toHaveLength(0);
  });

  it('says the same in English', async () => {
    fakeApi();
    const { user } = await openLoginPage();
    await user.click(screen.getByRole('button', { name: 'Continue' }));
    expect(await screen.findByText('Invalid input')).toBeInTheDocument();
    expect(screen.getByText('Username and password cannot be empty.')).toBeInTheDocument();
  });

  it('shows the signing-in label and ignores further submits while the request runs', async () => {
    let answer: (reply: ReturnType<typeof ok>) => void = () => {};
    const server = fakeApi({ 'POST /api/auth/login': () => new Promise((resolve) => (answer = resolve)) });
    const { user } = await openLoginPage();
    await user.type(screen.getByLabelText('Username'), 'alice');
    await user.type(screen.getByLabelText('Password'), 'secret-pw');
    await user.click(screen.getByRole('button', { name: 'Continue' }));

    const busy = await screen.findByRole('button', { name: 'Signing in…' });
    expect(busy).toBeDisabled();
    await user.keyboard('{Enter}');
    expect(server.callsTo('POST', '/api/auth/login')).toHaveLength(1);
    expect(server.calls.find((c) => c.url.pathname === '/api/auth/login')?.body).toEqual({ username: 'alice', password: 'secret-pw' });

    answer(fail(401, '用户名或密码错误'));
    expect(await screen.findByRole('button', { name: 'Continue' })).toBeEnabled();
  });

  it('a refused sign-in shows 登录失败 with the server message, or the default', async () => {
    let message: string | undefined = '用户名或密码错误';
    fakeApi({ 'POST /api/auth/login': () => fail(401, message) });
    const { user } = await openLoginPage('zh-CN');
    await user.type(screen.getByLabelText('用户名'), 'alice');
    await user.type(screen.getByLabelText('密码'), 'wrong');
    await user.click(screen.getByRole('button', { name: '继续' }));
    expect(await screen.findByText('登录失败')).toBeInTheDocument();
    expect(screen.getByText('用户名或密码错误')).toBeInTheDocument();

    message = undefined;
    await user.click(screen.getByRole('button', { name: '继续' }));
    expect(await screen.findByText('登录失败，请检查用户名和密码。')).toBeInTheDocument();
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('after a refusal the focus is on the field to correct, never the page body', async () => {
    fakeApi({ 'POST /api/auth/login': () => fail(401, 'Wrong username or password') });
    const { user } = await openLoginPage();
    await user.click(screen.getByRole('button', { name: 'Continue' }));
    expect(await screen.findByText('Invalid input')).toBeInTheDocument();
    expect(screen.getByLabelText('Username')).toHaveFocus();
    expect(screen.getByLabelText('Username')).toHaveAttribute('aria-invalid', 'true');

    await user.type(screen.getByLabelText('Username'), 'alice');
    expect(screen.getByLabelText('Username')).not.toHaveAttribute('aria-invalid');
    await user.type(screen.getByLabelText('Password'), 'wrong');
    await user.click(screen.getByRole('button', { name: 'Continue' }));
    expect(await screen.findByText('Wrong username or password')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByLabelText('Password')).toHaveFocus());
    expect(screen.getByLabelText('Password')).toHaveAttribute('aria-invalid', 'true');
    expect(document.activeElement).not.toBe(document.body);
  });

  it.each([
    ['no answer', () => 'network-error' as const, '登录请求失败，请稍后重试。'],
    ['a server error', () => fail(500, '数据库不可用'), '数据库不可用'],
  ])('a failed request (%s) shows 登录错误', async (_case, reply, description) => {
    fakeApi({ 'POST /api/auth/login': reply });
    const { user } = await openLoginPage('zh-CN');
    await user.type(screen.getByLabelText('用户名'), 'alice');
    await user.type(screen.getByLabelText('密码'), 'secret-pw');
    await user.click(screen.getByRole('button', { name: '继续' }));
    expect(await screen.findByText('登录错误')).toBeInTheDocument();
    expect(screen.getByText(description)).toBeInTheDocument();
  });

  it('success stores token, refresh_token and user, says 登录成功 and opens the dashboard', async () => {
    fakeApi({ 'POST /api/auth/login': () => ok(grant()), 'GET /api/analytics/system/overview': () => fail(503) });
    const { user, router } = await openLoginPage('zh-CN');
    await user.type(screen.getByLabelText('用户名'), '  alice ');
    await user.type(screen.getByLabelText('密码'), 'secret-pw');
    await user.keyboard('{Enter}');

    expect(await screen.findByText('登录成功')).toBeInTheDocument();
    expect(localStorage.getItem('token')).toBe('access-new');
    expect(localStorage.getItem('refresh_token')).toBe('refresh-new');
    expect(JSON.parse(localStorage.getItem('user') ?? '{}')).toMatchObject({ username: 'alice', role: 1 });
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });

  it('the password can be shown and hidden', async () => {
    fakeApi();
    const { user } = await openLoginPage();
    const password = screen.getByLabelText('Password');
    await user.type(password, 'secret-pw');
    expect(password).toHaveAttribute('type', 'password');
    await user.click(screen.getByRole('button', { name: 'Show password' }));
    expect(password).toHaveAttribute('type', 'text');
    await user.click(screen.getByRole('button', { name: 'Hide password' }));
    expect(password).toHaveAttribute('type', 'password');
  });
});

describe('provider buttons', () => {
  it('are disabled with a not-configured tooltip while the server has them off, and say so when clicked', async () => {
    fakeApi({ 'GET /api/status': () => ok(statusData({ github_oauth: true, github_client_id: '' })) });
    const { user } = await openLoginPage('zh-CN');
    const github = screen.getByRole('button', { name: '使用 GitHub 登录' });
    expect(github).toHaveAttribute('aria-disabled', 'true');

    await user.tab({ shift: true });
    await user.tab({ shift: true });
    expect(github).toHaveFocus();
    expect(await screen.findByRole('tooltip')).toHaveTextContent('GitHub 登录未配置');

    await user.click(github);
    expect(await screen.findByText('GitHub OAuth 未配置')).toBeInTheDocument();
    expect(screen.getByText('请联系管理员配置 OAuth。')).toBeInTheDocument();
    expect(leaveTo).not.toHaveBeenCalled();
  });

  it('go to the server’s authorize address when switched on with a client id', async () => {
    fakeApi({ 'GET /api/status': () => ok(statusData({ google_oauth: true, google_client_id: 'google-client' })) });
    const { user } = await openLoginPage();
    const google = screen.getByRole('button', { name: 'Continue with Google' });
    await waitFor(() => expect(google).not.toHaveAttribute('aria-disabled'));
    expect(screen.getByRole('button', { name: 'Continue with GitHub' })).toHaveAttribute('aria-disabled', 'true');

    await user.click(google);
    expect(leaveTo).toHaveBeenCalledExactlyOnceWith('/api/oauth/google/authorize?redirect=1');
  });
});

describe('OpenID Connect provider buttons', () => {
  const corp = { slug: 'corp', label: 'Corp SSO', icon: '', redirect_uri: 'http://localhost:3000/oauth/oidc/corp' };
  const team = { slug: 'team', label: 'Team Directory', icon: 'data:image/svg+xml,%3Csvg/%3E', redirect_uri: 'http://x/oauth/oidc/team' };

  it.each([
    ['en', 'Continue with Corp SSO', 'Continue with Team Directory'],
    ['zh-CN', '使用 Corp SSO 登录', '使用 Team Directory 登录'],
  ] as const)(
    'shows one button per enabled provider in %s, with its icon, and goes to its authorize address',
    async (language, first, second) => {
      fakeApi({ 'GET /api/status': () => ok(statusData({ oidc_providers: [corp, team] })) });
      const { user } = await openLoginPage(language);
      const corpButton = await screen.findByRole('button', { name: first });
      const teamButton = screen.getByRole('button', { name: second });
      expect(teamButton.querySelector('img')).toHaveAttribute('src', team.icon);
      expect(corpButton.querySelector('img')).toBeNull();
      await user.click(teamButton);
      expect(leaveTo).toHaveBeenLastCalledWith('/api/oauth/oidc/team/authorize?redirect=1');
    },
  );

  it('shows none when the server lists none', async () => {
    fakeApi({ 'GET /api/status': () => ok(statusData()) });
    await openLoginPage();
    expect(screen.getByRole('button', { name: 'Continue with GitHub' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Corp SSO/ })).toBeNull();
  });
});

describe('sign-in dialog', () => {
  it('opens from the top bar with the username focused, closes on Escape returning focus, and signs in to /', async () => {
    fakeApi({ 'POST /api/auth/login': () => ok(grant()), 'GET /api/analytics/system/overview': () => fail(503) });
    localStorage.setItem('i18nextLng', 'en');
    const user = userEvent.setup();
    const { router } = await renderApp('/oauth/github?error=access_denied');
    const login = await screen.findByRole('button', { name: 'Log in' });

    await user.click(login);
    const dialog = await screen.findByRole('dialog', { name: 'Sign in to Toolport' });
    expect(within(dialog).getByLabelText('Username')).toHaveFocus();
    await user.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    await waitFor(() => expect(login).toHaveFocus());

    await user.click(login);
    const again = await screen.findByRole('dialog');
    await user.type(within(again).getByLabelText('Username'), 'alice');
    await user.type(within(again).getByLabelText('Password'), 'secret-pw');
    await user.click(within(again).getByRole('button', { name: 'Continue' }));

    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(await screen.findByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
  });
});
