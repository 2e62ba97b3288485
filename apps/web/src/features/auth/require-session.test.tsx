import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { returnPath } from '../../app/return-to';
import { fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

const grant = () => {
  const { token: _apiKey, ...user } = selfUser();
  return { access_token: 'access-new', refresh_token: 'refresh-new', expires_in: 900, user };
};

describe('token guard', () => {
  it.each(['/', '/dashboard', '/services', '/analytics', '/profile', '/market', '/users', '/logs', '/preferences', '/api', '/models'])(
    'without a token, %s redirects to /login and remembers it',
    async (path) => {
      fakeApi();
      const { router } = await renderApp(path);
      expect(await screen.findByRole('heading', { name: 'Sign in to Toolport' })).toBeInTheDocument();
      expect(router.state.location.pathname).toBe('/login');
      expect(router.state.location.state).toEqual({ from: path });
    },
  );

  it('after signing in the user is back where they wanted to go, query included', async () => {
    fakeApi({ 'POST /api/auth/login': () => ok(grant()), 'GET /api/analytics/services/utilization': () => ok([]) });
    const user = userEvent.setup();
    const { router } = await renderApp('/analytics?from=mail#top');
    await user.type(await screen.findByLabelText('Username'), 'alice');
    await user.type(screen.getByLabelText('Password'), 'secret-pw');
    await user.click(screen.getByRole('button', { name: 'Continue' }));

    expect(await screen.findByRole('heading', { name: 'Analytics' })).toBeInTheDocument();
    expect(router.state.location).toMatchObject({ pathname: '/analytics', search: '?from=mail', hash: '#top' });
  });

  it('a signed-in user who opens /login goes on to the dashboard', async () => {
    storeSession();
    fakeApi({ 'GET /api/analytics/system/overview': () => new Promise(() => {}) });
    const { router } = await renderApp('/login');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(await screen.findByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
  });

  it('the documentation is public: it shows no server data, and Getting started tells how to sign in', async () => {
    fakeApi();
    const { router } = await renderApp('/docs');
    expect(await screen.findByRole('heading', { level: 1, name: 'Documentation' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/docs');
  });

  it('the OAuth return addresses are public', async () => {
    fakeApi();
    const { router } = await renderApp('/oauth/google');
    expect(await screen.findByText('Missing authorization code')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/oauth/google');
  });
});

describe('return path', () => {
  it.each([
    [{ from: '/analytics?x=1' }, '/analytics?x=1'],
    [{ from: '/profile#key' }, '/profile#key'],
    [undefined, '/'],
    [null, '/'],
    [{ from: 42 }, '/'],
    [{ from: 'https://evil.example/' }, '/'],
    [{ from: '//evil.example/' }, '/'],
    [{ from: '/\\evil.example' }, '/'],
    [{ from: '/login' }, '/'],
    [{ from: '/login?next=/x' }, '/'],
  ])('%j returns to %s', (state, expected) => {
    expect(returnPath(state)).toBe(expected);
  });
});
