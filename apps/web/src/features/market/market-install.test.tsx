import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type FakeReply, fail, ok } from '../../test/fake-api';
import { installStarted, installStatus, marketPackage, renderMarket } from './test-fixtures';
import { MARKET_POLL_INTERVAL_MS } from './use-install-tasks';
import { SUCCESS_TICK_MS } from './use-success-ticks';

const SEARCH = '/market?source=npm&q=echo';
const INSTALL = 'POST /api/mcp_market/install_or_add_service';
const STATUS = 'GET /api/mcp_market/install_status/t1';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The server's answer when required variables are missing (400 with data.required_env_vars). */
const envRequired = (names: string[]): FakeReply => ({
  status: 400,
  body: {
    success: false,
    message: `Please provide the required environment variables: ${names.join(', ')}`,
    code: 'required_env_vars',
    data: { required_env_vars: names },
  },
});

/** Answers install_status with each reply in turn, the last one from then on. */
function statusSequence(...replies: FakeReply[]) {
  return () => (replies.length > 1 ? (replies.shift() as FakeReply) : (replies[0] as FakeReply));
}

const echoCard = () => screen.findByRole('group', { name: 'acme-echo-mcp' });
const logDialog = () => screen.findByRole('dialog', { name: /Installing Service\.\.\.|Installation Complete|Installation Failed/ });

afterEach(() => vi.useRealTimers());

describe('marketplace install (docs/console.md §4)', () => {
  it('installs from a card: busy labels and spinner, the live log polled every 5 s, then Finish and a green tick', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const { api } = await renderMarket(SEARCH, {
      [INSTALL]: () => installStarted(),
      [STATUS]: statusSequence(
        ok(installStatus({ status: 'installing', logs: ['Installing npm package acme-echo-mcp@1.0.0'] })),
        ok(installStatus({ status: 'completed', logs: ['Installing npm package acme-echo-mcp@1.0.0', 'Handshake complete: 2 tools.'] })),
      ),
    });
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const card = await echoCard();
    await user.click(within(card).getByRole('button', { name: 'Install' }));

    const dialog = await logDialog();
    expect(within(dialog).getByRole('heading')).toHaveTextContent('Installing Service...');
    const log = within(dialog).getByRole('log', { name: 'Installation log' });
    expect(log).toHaveClass('h-64');
    await waitFor(() => expect(log).toHaveTextContent('Installing npm package acme-echo-mcp@1.0.0'));
    expect(log).toHaveTextContent('Installation initiated...');
    expect(within(dialog).getByRole('button', { name: 'Close' })).toBeDisabled();
    // The dialog is modal: the page behind it is hidden from assistive technology meanwhile.
    expect(within(card).getByRole('button', { name: 'Installing...', hidden: true })).toBeDisabled();
    expect(within(card).getByRole('status', { hidden: true })).toHaveTextContent('Installing...');
    expect(api.callsTo(INSTALL.split(' ')[0] as string, '/api/mcp_market/install_or_add_service')[0]?.body).toEqual({
      source_type: 'marketplace',
      package_name: 'acme-echo-mcp',
      package_manager: 'npm',
      version: '1.0.0',
      user_provided_env_vars: {},
      display_name: 'acme-echo-mcp',
      service_description: 'Echo tools for MCP clients',
    });

    const polls = () => api.callsTo('GET', '/api/mcp_market/install_status/t1').length;
    expect(polls()).toBe(1);
    // The clock also moves with real time here, so allow for what passed since the first answer.
    await act(() => vi.advanceTimersByTimeAsync(MARKET_POLL_INTERVAL_MS - 500));
    expect(polls()).toBe(1);
    const installedCalls = api.callsTo('GET', '/api/mcp_market/installed').length;
    await act(() => vi.advanceTimersByTimeAsync(500));
    expect(polls()).toBe(2);

    expect(await within(dialog).findByText('Handshake complete: 2 tools.')).toBeInTheDocument();
    expect(within(dialog).getByRole('heading')).toHaveTextContent('Installation Complete');
    expect(await screen.findByText('acme-echo-mcp is installed and running.')).toBeInTheDocument();
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/installed').length).toBeGreaterThan(installedCalls));
    expect(within(dialog).getByRole('button', { name: 'Finish' })).toBeEnabled();
    await act(() => vi.advanceTimersByTimeAsync(MARKET_POLL_INTERVAL_MS * 3));
    expect(polls()).toBe(2);

    await user.click(within(dialog).getByRole('button', { name: 'Finish' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(card.querySelector('[data-tick="installed"] .text-emerald-600')).not.toBeNull();
    expect(within(card).queryByRole('button', { name: 'Installing...' })).not.toBeInTheDocument();
  });

  it('shows the tick for 2 s once the log dialog is closed after a success', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    await renderMarket(SEARCH, { [INSTALL]: () => installStarted(), [STATUS]: () => ok(installStatus({ status: 'completed' })) });
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const card = await echoCard();
    await user.click(within(card).getByRole('button', { name: 'Install' }));
    const dialog = await screen.findByRole('dialog', { name: 'Installation Complete' });
    expect(card.querySelector('[data-tick]')).toBeNull();
    await user.click(within(dialog).getByRole('button', { name: 'Finish' }));
    expect(card.querySelector('[data-tick="installed"]')).not.toBeNull();
    // The clock also moves with real time here: a margin for what passed since the tick went up.
    await act(() => vi.advanceTimersByTimeAsync(SUCCESS_TICK_MS - 500));
    expect(card.querySelector('[data-tick="installed"]')).not.toBeNull();
    await act(() => vi.advanceTimersByTimeAsync(500));
    expect(card.querySelector('[data-tick]')).toBeNull();
  });

  it('ignores a second install of a card that is installing', async () => {
    const answer = deferred<FakeReply>();
    const { api } = await renderMarket(SEARCH, { [INSTALL]: () => answer.promise });
    const user = userEvent.setup();
    const button = within(await echoCard()).getByRole('button', { name: 'Install' });
    await user.dblClick(button);
    await user.click(button);
    expect(within(await echoCard()).getByRole('button', { name: 'Installing...' })).toBeDisabled();
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(1);
    answer.resolve(ok({ mcp_service_id: 3, status: 'already_installed_instance_added', service_name: 'acme-echo-mcp' }));
    await screen.findByRole('dialog', { name: 'Installation Complete' });
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(1);
  });

  it('asks for the missing variables the server names, checks them, and retries with them', async () => {
    const replies: FakeReply[] = [envRequired(['ACME_ECHO_TOKEN']), installStarted()];
    const { api } = await renderMarket(SEARCH, {
      [INSTALL]: () => replies.shift() as FakeReply,
      [STATUS]: () => ok(installStatus({ status: 'completed', logs: ['done'] })),
    });
    const user = userEvent.setup();
    await user.click(within(await echoCard()).getByRole('button', { name: 'Install' }));

    const modal = await screen.findByRole('dialog', { name: 'Environment variables required' });
    expect(
      within(modal).getByText('acme-echo-mcp needs these environment variables to run. Their values are stored encrypted on the server.'),
    ).toBeInTheDocument();
    const field = within(modal).getByLabelText('ACME_ECHO_TOKEN');
    await user.type(field, '   ');
    await user.click(within(modal).getByRole('button', { name: 'Install' }));
    expect(within(modal).getByRole('alert')).toHaveTextContent('Please enter a value for ACME_ECHO_TOKEN.');
    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(1);

    await user.clear(field);
    expect(within(modal).queryByRole('alert')).not.toBeInTheDocument();
    await user.type(field, ' t0ken {Enter}');
    expect(await screen.findByRole('dialog', { name: 'Installation Complete' })).toBeInTheDocument();
    const calls = api.callsTo('POST', '/api/mcp_market/install_or_add_service');
    expect(calls).toHaveLength(2);
    expect(calls[1]?.body).toMatchObject({ user_provided_env_vars: { ACME_ECHO_TOKEN: 't0ken' } });
  });

  it('reopens the variable modal when the server still wants one, and cancelling it clears the task', async () => {
    const replies: FakeReply[] = [envRequired(['A_KEY']), envRequired(['B_KEY'])];
    const { api } = await renderMarket(SEARCH, { [INSTALL]: () => replies.shift() as FakeReply });
    const user = userEvent.setup();
    const card = await echoCard();
    await user.click(within(card).getByRole('button', { name: 'Install' }));
    await user.type(within(await screen.findByRole('dialog')).getByLabelText('A_KEY'), 'a{Enter}');
    const second = await screen.findByRole('dialog', { name: 'Environment variables required' });
    expect(within(second).getByLabelText('B_KEY')).toHaveValue('');
    expect(within(second).queryByLabelText('A_KEY')).not.toBeInTheDocument();

    await user.click(within(second).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(within(card).getByRole('button', { name: 'Install' })).toBeEnabled();
    expect(within(card).queryByRole('status')).not.toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(2);
  });

  it("goes straight to success when an installed instance was added: 'Service instance added successfully.', no polling", async () => {
    const { api } = await renderMarket(SEARCH, {
      [INSTALL]: () => ok({ mcp_service_id: 3, status: 'already_installed_instance_added', service_name: 'acme-echo-mcp' }),
    });
    const user = userEvent.setup();
    await user.click(within(await echoCard()).getByRole('button', { name: 'Install' }));
    const dialog = await screen.findByRole('dialog', { name: 'Installation Complete' });
    expect(within(dialog).getByRole('log')).toHaveTextContent('Installation initiated...Service instance added successfully.');
    expect(within(dialog).getByRole('button', { name: 'Finish' })).toBeEnabled();
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/installed').length).toBeGreaterThan(1));
    expect(api.calls.filter((c) => c.url.pathname.startsWith('/api/mcp_market/install_status'))).toHaveLength(0);
  });

  it('ends in error with the server’s reason when the task failed; Close clears it', async () => {
    await renderMarket(SEARCH, {
      [INSTALL]: () => installStarted(),
      [STATUS]: () => ok(installStatus({ status: 'failed', logs: ['npm ERR! 404'], error_message: 'npm exited with code 1' })),
    });
    const user = userEvent.setup();
    const card = await echoCard();
    await user.click(within(card).getByRole('button', { name: 'Install' }));
    const dialog = await screen.findByRole('dialog', { name: 'Installation Failed' });
    expect(within(dialog).getByRole('alert')).toHaveTextContent('npm exited with code 1');
    expect(within(dialog).getByRole('log')).toHaveTextContent('npm ERR! 404');
    expect(await screen.findByText('Installation Failed', { selector: '[data-sonner-toast] *' })).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(within(card).getByRole('button', { name: 'Install' })).toBeEnabled();
    expect(within(card).queryByRole('alert')).not.toBeInTheDocument();
  });

  it("says 'Installation failed' when a failed task gives no reason", async () => {
    await renderMarket(SEARCH, { [INSTALL]: () => installStarted(), [STATUS]: () => ok(installStatus({ status: 'failed' })) });
    const user = userEvent.setup();
    await user.click(within(await echoCard()).getByRole('button', { name: 'Install' }));
    const dialog = await screen.findByRole('dialog', { name: 'Installation Failed' });
    expect(within(dialog).getByRole('alert')).toHaveTextContent(/^Installation failed$/);
  });

  it.each([
    ['the server answers with an error', fail(404, 'Install task not found'), 'Polling failed. Check server logs.'],
    ['no answer comes', 'network-error' as const, 'Failed to poll installation status.'],
  ])('stops polling with an error when %s', async (_case, reply, message) => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const { api } = await renderMarket(SEARCH, { [INSTALL]: () => installStarted(), [STATUS]: () => reply });
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    await user.click(within(await echoCard()).getByRole('button', { name: 'Install' }));
    const dialog = await screen.findByRole('dialog', { name: 'Installation Failed' });
    expect(within(dialog).getByRole('alert')).toHaveTextContent(message);
    expect(await screen.findByText('Polling Error')).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(MARKET_POLL_INTERVAL_MS * 3));
    expect(api.callsTo('GET', '/api/mcp_market/install_status/t1')).toHaveLength(1);
  });

  it('stops polling when the marketplace is left (the task is cancelled)', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const { api, router } = await renderMarket(SEARCH, {
      [INSTALL]: () => installStarted(),
      [STATUS]: () => ok(installStatus({ status: 'installing' })),
    });
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    await user.click(within(await echoCard()).getByRole('button', { name: 'Install' }));
    await screen.findByRole('dialog', { name: 'Installing Service...' });
    await act(() => vi.advanceTimersByTimeAsync(MARKET_POLL_INTERVAL_MS));
    expect(api.callsTo('GET', '/api/mcp_market/install_status/t1')).toHaveLength(2);
    await act(() => router.navigate('/profile'));
    await act(() => vi.advanceTimersByTimeAsync(MARKET_POLL_INTERVAL_MS * 3));
    expect(api.callsTo('GET', '/api/mcp_market/install_status/t1')).toHaveLength(2);
  });

  it.each([
    [
      'refuses it',
      fail(400, 'This package cannot be installed: oci packages are not supported'),
      'Installation Failed',
      'This package cannot be installed: oci packages are not supported',
    ],
    [
      'does not know the package',
      fail(404, 'Package acme-echo-mcp was not found on npm'),
      'Service Not Found',
      'Package acme-echo-mcp was not found on npm',
    ],
    // The one failure policy (decision 0047): no answer is the action's error title with the network text.
    ['cannot be reached', 'network-error' as const, 'Installation Error', 'Network error: please check your network connection'],
  ])('sets error and says so when the server %s', async (_case, reply, title, description) => {
    await renderMarket(SEARCH, { [INSTALL]: () => reply });
    const user = userEvent.setup();
    const card = await echoCard();
    await user.click(within(card).getByRole('button', { name: 'Install' }));
    expect(await screen.findByText(title)).toBeInTheDocument();
    expect(screen.getByText(description, { selector: '[data-sonner-toast] *' })).toBeInTheDocument();
    expect(within(card).getByRole('alert')).toHaveTextContent(reply === 'network-error' ? 'Failed to trigger install' : description);
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(within(card).getByRole('button', { name: 'Install' })).toBeEnabled();
  });

  it("says 'Error' when a result names no package to install, sending nothing", async () => {
    const { api } = await renderMarket(SEARCH, { 'GET /api/mcp_market/search': () => ok([marketPackage({ name: '' })]) });
    const user = userEvent.setup();
    const card = await screen.findByRole('group', { name: 'Unknown Name' });
    await user.click(within(card).getByRole('button', { name: 'Install' }));
    expect(await screen.findByText('Error')).toBeInTheDocument();
    expect(screen.getByText('Service ID not found for installation.')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(0);
  });
});

describe('marketplace uninstall (docs/console.md §2.10, §4)', () => {
  const installed = marketPackage({ is_installed: true, installed_service_id: 4 });

  it('asks first, then uninstalls: busy label, red tick, and the result reads not installed without a new search', async () => {
    const answer = deferred<FakeReply>();
    const { api } = await renderMarket(SEARCH, {
      'GET /api/mcp_market/search': () => ok([installed]),
      'POST /api/mcp_market/uninstall': () => answer.promise,
    });
    const user = userEvent.setup();
    const card = await echoCard();
    await user.click(within(card).getByRole('button', { name: 'Uninstall' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Confirm Uninstallation' });
    expect(confirm).toHaveTextContent('acme-echo-mcp will be removed from the gateway. This action cannot be undone.');
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')).toHaveLength(0);

    await user.click(within(card).getByRole('button', { name: 'Uninstall' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await within(card).findByRole('button', { name: 'Uninstalling...' })).toBeDisabled();
    answer.resolve(ok(undefined, 'Service uninstalled'));
    expect(await screen.findByText('Uninstall Complete')).toBeInTheDocument();
    expect(screen.getByText('acme-echo-mcp has been uninstalled.')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')[0]?.body).toEqual({ service_id: 4 });
    expect(await within(card).findByRole('button', { name: 'Install' })).toBeEnabled();
    expect(card.querySelector('[data-tick="uninstalled"] .text-red-600')).not.toBeNull();
    expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(1);
  });

  it("says 'Cannot Uninstall' when the numeric service id is missing", async () => {
    const { api } = await renderMarket(SEARCH, {
      'GET /api/mcp_market/search': () => ok([marketPackage({ is_installed: true, installed_service_id: null })]),
    });
    const user = userEvent.setup();
    await user.click(within(await echoCard()).getByRole('button', { name: 'Uninstall' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Cannot Uninstall')).toBeInTheDocument();
    expect(screen.getByText('Service data is incomplete or service ID is missing.')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')).toHaveLength(0);
  });

  it("refuses an id that is not an integer: 'Invalid Service ID format.'", async () => {
    const { api } = await renderMarket(SEARCH, {
      'GET /api/mcp_market/search': () => ok([marketPackage({ is_installed: true, installed_service_id: 1.5 })]),
    });
    const user = userEvent.setup();
    await user.click(within(await echoCard()).getByRole('button', { name: 'Uninstall' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Uninstall Failed')).toBeInTheDocument();
    expect(screen.getByText('Invalid Service ID format.')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')).toHaveLength(0);
  });

  it("says 'Uninstall Failed' with the server's message, or 'Failed to uninstall service.', and keeps the service", async () => {
    const replies: FakeReply[] = [fail(409, 'The service is busy'), fail(400)];
    await renderMarket(SEARCH, {
      'GET /api/mcp_market/search': () => ok([installed]),
      'POST /api/mcp_market/uninstall': () => replies.shift() as FakeReply,
    });
    const user = userEvent.setup();
    const card = await echoCard();
    await user.click(within(card).getByRole('button', { name: 'Uninstall' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Uninstall Failed')).toBeInTheDocument();
    expect(screen.getByText('The service is busy', { selector: '[data-sonner-toast] *' })).toBeInTheDocument();
    expect(within(card).getByRole('button', { name: 'Uninstall' })).toBeEnabled();

    await user.click(within(card).getByRole('button', { name: 'Uninstall' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Failed to uninstall service.', { selector: '[data-sonner-toast] *' })).toBeInTheDocument();
  });
});
