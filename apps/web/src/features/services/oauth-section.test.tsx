import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { UpstreamOAuthState } from '@toolport/contract';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { ServicesPage } from './services-page';

const state = (overrides: Partial<UpstreamOAuthState> = {}): UpstreamOAuthState => ({
  service_id: 1,
  oauth_mode: 'per_user',
  oauth_status: 'needs_authorization',
  issuer: 'https://auth.example',
  registration: 'dynamic',
  client_id: '',
  has_client_secret: true,
  connected_as: '',
  expires_at: null,
  connected_at: null,
  ...overrides,
});

async function openConfig(role: number, oauth: UpstreamOAuthState, routes = {}) {
  storeSession({ role });
  const api = fakeApi({
    'GET /api/mcp_market/installed': () => ok([installedService({ name: 'guarded', display_name: 'Guarded' })]),
    'GET /api/user/self': () => ok(selfUser({ role })),
    'GET /api/mcp_services/1/oauth': () => ok(oauth),
    ...routes,
  });
  const user = userEvent.setup();
  await renderWithProviders(<ServicesPage />);
  await user.click(await screen.findByRole('button', { name: 'Configure' }));
  const dialog = await screen.findByRole('dialog');
  return { api, user, dialog };
}

afterEach(() => vi.unstubAllGlobals());

describe('the OAuth section of the configuration dialog (issue 19)', () => {
  it('lets a user connect their own account in per-user mode: the browser goes to the authorize URL', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign, origin: 'http://localhost:3000' });
    const { api, user, dialog } = await openConfig(1, state(), {
      'POST /api/mcp_services/1/oauth/connect': () => ok({ authorize_url: 'https://auth.example/authorize?x=1' }),
    });
    const section = await within(dialog).findByTestId('oauth-section');
    expect(within(section).getByTestId('oauth-status')).toHaveTextContent('Needs authorization');
    expect(within(section).queryByRole('radio')).not.toBeInTheDocument();
    await user.click(within(section).getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('https://auth.example/authorize?x=1'));
    expect(api.callsTo('POST', '/api/mcp_services/1/oauth/connect')).toHaveLength(1);
  });

  it('shows a non-admin the shared connection without buttons, and who it acts as', async () => {
    const { dialog } = await openConfig(1, state({ oauth_mode: 'shared', oauth_status: 'connected', connected_as: 'team@example.com' }));
    const section = await within(dialog).findByTestId('oauth-section');
    expect(within(section).getByTestId('oauth-status')).toHaveTextContent('Connected · Connected as team@example.com');
    expect(within(section).queryByRole('button')).not.toBeInTheDocument();
  });

  it('lets an admin change the mode and disconnect, and says why a refused connect failed', async () => {
    const { api, user, dialog } = await openConfig(10, state({ oauth_mode: 'shared', oauth_status: 'connected' }), {
      'PUT /api/mcp_services/1/oauth': () => ok(state()),
      'POST /api/mcp_services/1/oauth/disconnect': () => ok(state({ oauth_mode: 'shared' })),
      'POST /api/mcp_services/1/oauth/connect': () => fail(400, 'The authorization server of guarded could not be reached (refused)'),
    });
    const section = await within(dialog).findByTestId('oauth-section');
    await user.click(within(section).getByRole('radio', { name: /Per user/ }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/mcp_services/1/oauth')[0]?.body).toEqual({ oauth_mode: 'per_user' }));
    // The buttons wait while a change is on its way.
    await waitFor(() => expect(within(section).getByRole('button', { name: 'Disconnect' })).toBeEnabled());
    await user.click(within(section).getByRole('button', { name: 'Disconnect' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_services/1/oauth/disconnect')).toHaveLength(1));
    await waitFor(() => expect(within(section).getByRole('button', { name: 'Reconnect' })).toBeEnabled());
    await user.click(within(section).getByRole('button', { name: 'Reconnect' }));
    expect(await screen.findByText(/could not be reached/)).toBeInTheDocument();
  });

  it('stays out of the way of services that use no OAuth, for non-admins', async () => {
    const { dialog } = await openConfig(1, state({ oauth_mode: null, oauth_status: 'none' }));
    await within(dialog).findByText('Requests per day');
    expect(within(dialog).queryByTestId('oauth-section')).not.toBeInTheDocument();
  });
});

describe('Connect on the card of a service that needs authorization (issue 29)', () => {
  const needing = installedService({
    name: 'guarded',
    display_name: 'Guarded',
    health_status: 'needs_authorization',
    health_details: 'The service needs authorization: an administrator must connect its account',
    oauth_mode: 'shared',
    oauth_status: 'needs_authorization',
  });

  async function servicesAs(role: number, service = needing, routes = {}) {
    storeSession({ role });
    const api = fakeApi({
      'GET /api/mcp_market/installed': () => ok([service]),
      'GET /api/user/self': () => ok(selfUser({ role })),
      ...routes,
    });
    await renderWithProviders(<ServicesPage />);
    const card = await screen.findByRole('group', { name: 'Guarded' });
    return { api, card };
  }

  it('lets an admin connect the shared account from the card: the browser goes to the provider', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign, origin: 'http://localhost:3000' });
    const { api, card } = await servicesAs(10, needing, {
      'POST /api/mcp_services/1/oauth/connect': () => ok({ authorize_url: 'https://auth.example/authorize?card=1' }),
    });
    expect(within(card).getByTestId('health-reason')).toHaveTextContent('Needs authorization: connect its account to use it');
    expect(within(card).getByRole('img', { name: /^Health: Needs authorization\./ })).toBeInTheDocument();
    await userEvent.setup().click(within(card).getByRole('button', { name: 'Connect Guarded' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('https://auth.example/authorize?card=1'));
    expect(api.callsTo('POST', '/api/mcp_services/1/oauth/connect')).toHaveLength(1);
  });

  it('tells a user that an administrator must connect a shared account, without a button', async () => {
    const { card } = await servicesAs(1);
    expect(within(card).getByTestId('health-reason')).toHaveTextContent('Needs authorization: an administrator must connect its account');
    expect(within(card).queryByRole('button', { name: 'Connect Guarded' })).not.toBeInTheDocument();
  });

  it('offers each user Connect for their own account in per-user mode, and says why a refused connect failed', async () => {
    const perUser = { ...needing, health_status: 'healthy', oauth_mode: 'per_user' as const };
    const { card } = await servicesAs(1, perUser, {
      'POST /api/mcp_services/1/oauth/connect': () => fail(400, 'The authorization server of guarded could not be reached (refused)'),
    });
    expect(within(card).getByTestId('health-reason')).toHaveTextContent('Needs your authorization: connect your own account to use it');
    await userEvent.setup().click(within(card).getByRole('button', { name: 'Connect Guarded' }));
    expect(await screen.findByText(/could not be reached/)).toBeInTheDocument();
  });
});
