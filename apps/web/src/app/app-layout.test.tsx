import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeApi, ok, selfUser, storeSession } from '../test/fake-api';
import { renderApp } from '../test/render';

const pending = () => new Promise<never>(() => {});

async function openAs(role: number, path = '/', user: { display_name?: string } = {}) {
  localStorage.setItem('i18nextLng', 'en');
  storeSession({ role, ...user });
  const server = fakeApi({
    'GET /api/user/self': () => ok(selfUser({ role, ...user })),
    'GET /api/analytics/system/overview': pending,
    'POST /api/auth/logout': () => ok(),
  });
  const app = await renderApp(path);
  return { server, user: userEvent.setup(), ...app };
}

const sidebarLinks = async () => {
  const nav = await screen.findByRole('navigation', { name: 'Sections' });
  return within(nav)
    .getAllByRole('link')
    .map((link) => link.textContent);
};

describe('console frame', () => {
  it('a user sees Dashboard, Services, Groups, Analytics and Profile', async () => {
    await openAs(1);
    expect(await sidebarLinks()).toEqual(['Dashboard', 'Services', 'Groups', 'Analytics', 'Profile']);
  });

  it.each([10, 100])('role %i also sees Market, Users, Logs, Audit and Preferences', async (role) => {
    await openAs(role);
    expect(await sidebarLinks()).toEqual([
      'Dashboard',
      'Services',
      'Groups',
      'Analytics',
      'Profile',
      'Market',
      'Users',
      'Logs',
      'Audit',
      'Preferences',
    ]);
  });

  it('marks the current page in the sidebar, also for / as the dashboard', async () => {
    await openAs(1);
    const nav = await screen.findByRole('navigation', { name: 'Sections' });
    expect(within(nav).getByRole('link', { name: 'Dashboard' })).toHaveAttribute('aria-current', 'page');
    expect(within(nav).getByRole('link', { name: 'Analytics' })).not.toHaveAttribute('aria-current');
  });

  it('the top bar has the title, Dashboard and Docs links and the display name, else the username', async () => {
    await openAs(1, '/', { display_name: '' });
    const top = await screen.findByRole('navigation', { name: 'Main' });
    expect(within(top).getByRole('link', { name: 'Dashboard' })).toHaveAttribute('href', '/dashboard');
    expect(within(top).getByRole('link', { name: 'Docs' })).toHaveAttribute('href', '/docs');
    expect(screen.getByRole('link', { name: 'Toolport' })).toHaveAttribute('href', '/');
    expect(screen.getByTestId('current-user')).toHaveTextContent('alice');
  });

  it('follows a role change from the server without signing in again', async () => {
    localStorage.setItem('i18nextLng', 'en');
    storeSession({ role: 1 });
    fakeApi({
      'GET /api/user/self': () => ok(selfUser({ role: 10, display_name: 'Promoted Alice' })),
      'GET /api/analytics/system/overview': pending,
    });
    await renderApp('/');
    await waitFor(() => expect(screen.getByTestId('current-user')).toHaveTextContent('Promoted Alice'));
    expect(await sidebarLinks()).toContain('Market');
    expect(JSON.parse(localStorage.getItem('user') ?? '{}')).not.toHaveProperty('token');
  });

  it('logout revokes the refresh token, clears the session and opens the sign-in page', async () => {
    const { server, user, router } = await openAs(1);
    await user.click(await screen.findByRole('button', { name: 'Log out' }));

    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(server.callsTo('POST', '/api/auth/logout')[0]?.body).toEqual({ refresh_token: 'refresh-1' });
    expect(server.callsTo('POST', '/api/auth/logout')[0]?.headers.get('authorization')).toBe('Bearer access-1');
    expect([localStorage.getItem('token'), localStorage.getItem('refresh_token'), localStorage.getItem('user')]).toEqual([
      null,
      null,
      null,
    ]);
    expect(await screen.findByRole('button', { name: 'Log in' })).toBeInTheDocument();
    expect(screen.queryByRole('navigation', { name: 'Sections' })).not.toBeInTheDocument();
  });

  it('a user opening an admin page is told it is for administrators', async () => {
    await openAs(1, '/users');
    expect(await screen.findByRole('alert')).toHaveTextContent('Administrators only');
  });

  it.each([
    ['/services', 'Services'],
    ['/docs', 'Documentation'],
    ['/api', 'API'],
    ['/models', 'Models'],
    ['/market', 'Market'],
    ['/preferences', 'Preferences'],
  ])('%s has a page for an admin', async (path, heading) => {
    await openAs(10, path);
    expect(await screen.findByRole('heading', { level: 1, name: heading })).toBeInTheDocument();
  });

  it('an unknown address says so', async () => {
    await openAs(1, '/no/such/page');
    expect(await screen.findByRole('heading', { name: 'Page not found' })).toBeInTheDocument();
  });

  it('the menu button opens the navigation as a dialog that closes when a page is chosen', async () => {
    const { user, router } = await openAs(10);
    const menu = await screen.findByRole('button', { name: 'Open menu' });
    await user.click(menu);
    const sheet = await screen.findByRole('dialog', { name: 'Toolport' });
    await user.click(within(sheet).getByRole('link', { name: 'Logs' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    // The page's code loads lazily; the address changes once it has.
    await waitFor(() => expect(router.state.location.pathname).toBe('/logs'));
  });

  it('the sample Service Configuration dialog saves nothing but a toast, and gives focus back', async () => {
    const { server, user } = await openAs(1);
    const nav = await screen.findByRole('navigation', { name: 'Sections' });
    const open = within(nav.parentElement as HTMLElement).getByRole('button', { name: 'Sample configuration' });
    await user.click(open);
    const dialog = await screen.findByRole('dialog', { name: 'Service Configuration' });
    expect(within(dialog).getByLabelText('API key')).toHaveAttribute('readonly');
    expect(within(dialog).getByLabelText('Endpoint')).toHaveValue('https://gateway.example.com/proxy/sample/mcp');
    const callsBefore = server.calls.length;

    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Configuration saved')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    await waitFor(() => expect(open).toHaveFocus());
    expect(server.calls.length).toBe(callsBefore);
  });
});
