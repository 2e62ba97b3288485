import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { SelfUser } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { BIND_INTENT_KEY, rememberBindIntent } from '../../lib/bind-intent';
import { selfQueryKey } from '../../lib/self';
import { fail, fakeApi, ok, selfUser, statusData, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

const grant = () => {
  const { token: _apiKey, ...user } = selfUser({ login_method: 'github', github_id: '42' });
  return { access_token: 'oauth-access', refresh_token: 'oauth-refresh', expires_in: 900, mode: 'login', user };
};

describe('OAuth return screens', () => {
  it('exchange the code and state once, store the session and open the dashboard', async () => {
    const server = fakeApi({
      'GET /api/oauth/github': () => ok(grant()),
      'GET /api/analytics/system/overview': () => new Promise(() => {}),
    });
    localStorage.setItem('i18nextLng', 'zh-CN');
    const { router } = await renderApp('/oauth/github?code=the-code&state=the-state');

    expect(await screen.findByText('登录成功')).toBeInTheDocument();
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    const exchanges = server.callsTo('GET', '/api/oauth/github');
    expect(exchanges).toHaveLength(1);
    expect(Object.fromEntries(exchanges[0]?.url.searchParams ?? [])).toEqual({ code: 'the-code', state: 'the-state' });
    expect(localStorage.getItem('token')).toBe('oauth-access');
    expect(localStorage.getItem('refresh_token')).toBe('oauth-refresh');
    expect(JSON.parse(localStorage.getItem('user') ?? '{}')).toMatchObject({ username: 'alice' });
  });

  it('shows a spinner while the exchange runs', async () => {
    fakeApi({ 'GET /api/oauth/google': () => new Promise(() => {}) });
    await renderApp('/oauth/google?code=c&state=s');
    expect(await screen.findByRole('status')).toHaveTextContent('Processing login…');
  });

  it.each([
    ['/oauth/github?error=access_denied', 'OAuth GitHub 授权失败'],
    ['/oauth/google?error=access_denied&code=ignored', 'OAuth Google 授权失败'],
    ['/oauth/github?state=s', '缺少授权码'],
  ])('%s fails with %s and offers the way back to sign-in', async (path, message) => {
    const server = fakeApi();
    localStorage.setItem('i18nextLng', 'zh-CN');
    const user = userEvent.setup();
    const { router } = await renderApp(path);

    expect(await screen.findByRole('alert')).toHaveTextContent(message);
    expect(server.calls.filter((c) => c.url.pathname.startsWith('/api/oauth/'))).toHaveLength(0);
    await user.click(screen.getByRole('link', { name: '返回登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
  });

  it("a refused exchange shows the server's message", async () => {
    fakeApi({ 'GET /api/oauth/github': () => fail(400, 'GitHub OAuth is not configured') });
    await renderApp('/oauth/github?code=c&state=s');
    expect(await screen.findByRole('alert')).toHaveTextContent('GitHub OAuth is not configured');
    expect(localStorage.getItem('token')).toBeNull();
  });
});

describe('OpenID Connect return screen', () => {
  const corp = { slug: 'corp', label: 'Corp SSO', icon: '', redirect_uri: 'http://localhost:3000/oauth/oidc/corp' };

  it('exchanges the code at the provider’s own callback and opens the dashboard', async () => {
    const server = fakeApi({
      'GET /api/status': () => ok(statusData({ oidc_providers: [corp] })),
      'GET /api/oauth/oidc/corp': () => ok(grant()),
      'GET /api/analytics/system/overview': () => new Promise(() => {}),
    });
    const { router } = await renderApp('/oauth/oidc/corp?code=the-code&state=the-state');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    const exchanges = server.callsTo('GET', '/api/oauth/oidc/corp');
    expect(exchanges).toHaveLength(1);
    expect(Object.fromEntries(exchanges[0]?.url.searchParams ?? [])).toEqual({ code: 'the-code', state: 'the-state' });
    expect(localStorage.getItem('token')).toBe('oauth-access');
  });

  it.each([
    ['en', 'Sign-in refused: the identity token from Corp SSO is not valid (the signature does not verify)', 'Back to sign in'],
    ['zh-CN', '登录被拒绝：Corp SSO 返回的身份令牌无效（the signature does not verify）', '返回登录'],
  ])('shows the server’s refusal in %s and no session', async (language, message, back) => {
    fakeApi({
      'GET /api/status': () => ok(statusData({ oidc_providers: [corp] })),
      'GET /api/oauth/oidc/corp': () => fail(400, message, 'oidc_id_token_invalid'),
    });
    localStorage.setItem('i18nextLng', language);
    await renderApp('/oauth/oidc/corp?code=c&state=s');
    expect(await screen.findByRole('alert')).toHaveTextContent(message);
    expect(screen.getByRole('link', { name: back })).toBeInTheDocument();
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('names the provider by its label when it sends an error back, never by its slug while the status is coming', async () => {
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const server = fakeApi({
      'GET /api/status': async () => {
        await held;
        return ok(statusData({ oidc_providers: [corp] }));
      },
    });
    // Every text the page shows on the way, not only the last.
    const shown = new Set<string>();
    const observer = new MutationObserver(() => shown.add(document.body.textContent ?? ''));
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    await renderApp('/oauth/oidc/corp?error=access_denied&state=s');
    await waitFor(() => expect(server.callsTo('GET', '/api/status').length).toBeGreaterThan(0));
    expect(await screen.findByRole('status')).toHaveTextContent('Processing login…');
    answer();
    expect(await screen.findByRole('alert')).toHaveTextContent('OAuth Corp SSO authorization failed');
    observer.disconnect();
    expect([...shown].filter((text) => text.includes('OAuth corp'))).toEqual([]);
  });

  it('names an OpenID Connect provider by its slug when the status does not name it', async () => {
    fakeApi({ 'GET /api/status': () => ok(statusData({ oidc_providers: [] })) });
    await renderApp('/oauth/oidc/corp?error=access_denied&state=s');
    expect(await screen.findByRole('alert')).toHaveTextContent('OAuth corp authorization failed');
  });
});

describe('OAuth return after a bind from the profile', () => {
  const bindGrant = (overrides: Partial<SelfUser> = {}) => ({
    ...grant(),
    mode: 'bind',
    user: { ...grant().user, login_method: 'password', ...overrides },
  });
  /** What the profile leaves behind before the browser goes to the provider. */
  const rememberBind = (provider: 'github' | 'google', state = 'the-state') =>
    rememberBindIntent(provider, `https://provider.example/authorize?client_id=c&state=${state}`);

  it('mode bind keeps the session, refreshes the profile and opens it with the provider bound', async () => {
    storeSession();
    rememberBind('github');
    let self = selfUser();
    let release = () => {};
    const answered = new Promise<void>((resolve) => (release = resolve));
    const server = fakeApi({
      'GET /api/oauth/github': async () => {
        await answered;
        self = selfUser({ github_id: '42' });
        return ok(bindGrant({ github_id: '42' }), 'GitHub account linked');
      },
      'GET /api/user/self': () => ok(self),
      'GET /api/status': () => ok(statusData({ github_oauth: true, github_client_id: 'gh' })),
    });
    localStorage.setItem('i18nextLng', 'en');
    const { router, queryClient } = await renderApp('/oauth/github?code=the-code&state=the-state');
    // A console that had the profile cached from before the bind.
    queryClient.setQueryData(selfQueryKey, selfUser());
    release();

    expect(await screen.findByText('GitHub account bound')).toBeInTheDocument();
    expect(screen.getByText('You can now sign in with GitHub.')).toBeInTheDocument();
    await waitFor(() => expect(router.state.location.pathname).toBe('/profile'));
    expect(screen.queryByText('Signed in')).not.toBeInTheDocument();
    expect(server.callsTo('GET', '/api/oauth/github')).toHaveLength(1);
    // The session the user signed in with stays; the stored user now carries the binding.
    expect(localStorage.getItem('token')).toBe('access-1');
    expect(localStorage.getItem('refresh_token')).toBe('refresh-1');
    expect(JSON.parse(localStorage.getItem('user') ?? '{}')).toMatchObject({ id: 7, github_id: '42' });
    const card = await screen.findByRole('region', { name: 'Sign-in methods' });
    await waitFor(() => expect(within(card).getByRole('listitem', { name: 'GitHub' })).toHaveTextContent('Account 42'));
    expect(sessionStorage.getItem(BIND_INTENT_KEY)).toBeNull();
  });

  it('says so in Chinese, and takes the answer’s session when this browser has none left', async () => {
    fakeApi({ 'GET /api/oauth/google': () => ok(bindGrant({ google_id: 'g-1' })) });
    localStorage.setItem('i18nextLng', 'zh-CN');
    const { router } = await renderApp('/oauth/google?code=c&state=s');
    expect(await screen.findByText('已绑定 Google 账号')).toBeInTheDocument();
    expect(screen.getByText('现在可以使用 Google 登录。')).toBeInTheDocument();
    await waitFor(() => expect(router.state.location.pathname).toBe('/profile'));
    expect(localStorage.getItem('token')).toBe('oauth-access');
    expect(localStorage.getItem('refresh_token')).toBe('oauth-refresh');
  });

  it('shows binding, not signing in, while the exchange runs', async () => {
    rememberBind('google', 's');
    fakeApi({ 'GET /api/oauth/google': () => new Promise(() => {}) });
    await renderApp('/oauth/google?code=c&state=s');
    expect(await screen.findByRole('status')).toHaveTextContent('Binding your Google account…');
  });

  it.each([
    ['en', 'Binding failed', 'This GitHub account is already linked to another user', 'Back to profile'],
    ['zh-CN', '绑定失败', '该 GitHub 账号已绑定到其他用户', '返回个人资料'],
  ])(
    'an account bound to another user is refused on the return screen with the way back to the profile (%s)',
    async (lng, title, message, back) => {
      storeSession();
      const server = fakeApi({ 'GET /api/oauth/github': () => fail(409, message, 'oauth_identity_taken') });
      localStorage.setItem('i18nextLng', lng);
      const user = userEvent.setup();
      // No remembered bind (another tab started it, say): the refusal itself tells it was one.
      const { router } = await renderApp('/oauth/github?code=c&state=s');

      const alert = await screen.findByRole('alert');
      expect(alert).toHaveTextContent(title);
      expect(alert).toHaveTextContent(message);
      expect(screen.queryByRole('link', { name: lng === 'en' ? 'Back to sign in' : '返回登录' })).not.toBeInTheDocument();
      expect(localStorage.getItem('token')).toBe('access-1');
      await user.click(screen.getByRole('link', { name: back }));
      await waitFor(() => expect(router.state.location.pathname).toBe('/profile'));
      expect(server.callsTo('GET', '/api/oauth/github')).toHaveLength(1);
    },
  );

  it('declining a bind at the provider leads back to the profile', async () => {
    storeSession();
    rememberBind('github', 'st-9');
    const server = fakeApi();
    localStorage.setItem('i18nextLng', 'zh-CN');
    const user = userEvent.setup();
    const { router } = await renderApp('/oauth/github?error=access_denied&state=st-9');

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('绑定失败');
    expect(alert).toHaveTextContent('OAuth GitHub 授权失败');
    expect(server.calls.filter((c) => c.url.pathname.startsWith('/api/oauth/'))).toHaveLength(0);
    expect(sessionStorage.getItem(BIND_INTENT_KEY)).toBeNull();
    await user.click(screen.getByRole('link', { name: '返回个人资料' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/profile'));
  });

  it('a remembered bind of another round trip does not turn a sign-in into one', async () => {
    rememberBind('github', 'old-state');
    fakeApi({ 'GET /api/oauth/github': () => fail(400, 'The GitHub sign-in request is invalid', 'oauth_state_invalid') });
    localStorage.setItem('i18nextLng', 'en');
    await renderApp('/oauth/github?code=c&state=new-state');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Sign-in failed');
    expect(screen.getByRole('link', { name: 'Back to sign in' })).toBeInTheDocument();
  });
});
