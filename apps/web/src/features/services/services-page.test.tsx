import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { installedServicesKey } from '../../lib/installed-services';
import { type FakeReply, fail, fakeApi, ok, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { ServicesPage } from './services-page';

const ADMIN = { role: 10, username: 'root' };
const USER = { role: 1 };

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function renderPage(services = [installedService()], role: { role: number; username?: string } = ADMIN, routes = {}) {
  storeSession(role);
  const api = fakeApi({ 'GET /api/mcp_market/installed': () => ok(services), ...routes });
  const user = userEvent.setup();
  await renderWithProviders(<ServicesPage />, { path: '/services' });
  return { api, user };
}

describe('services page: views and tabs (docs/console.md §2.5)', () => {
  it('shows a card per service in the grid, and the list with its columns', async () => {
    const { user } = await renderPage([
      installedService({ id: 1, display_name: 'Everything', name: 'everything', version: '' }),
      installedService({ id: 2, display_name: '', name: 'bare', health_status: 'weird' }),
    ]);
    const cards = await screen.findAllByTestId('service-card');
    expect(cards).toHaveLength(2);
    expect(within(cards[0] as HTMLElement).getByRole('heading', { name: 'Everything' })).toBeInTheDocument();
    expect(within(cards[1] as HTMLElement).getByRole('heading', { name: 'bare' })).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'List view' }));
    expect(screen.getByRole('button', { name: 'List view' })).toHaveAttribute('aria-pressed', 'true');
    for (const column of ['Status', 'Service name', 'Description', 'Version', 'Health status', 'Enabled', 'Operations']) {
      expect(screen.getByRole('columnheader', { name: column })).toBeInTheDocument();
    }
    const rows = screen.getAllByTestId('service-row');
    expect(within(rows[0] as HTMLElement).getAllByText('unknown')).toHaveLength(1); // no version
    expect(within(rows[1] as HTMLElement).getByText('unknown')).toBeInTheDocument(); // unknown health
    expect(within(rows[0] as HTMLElement).getByText('Healthy')).toBeInTheDocument();
  });

  it('filters by tab: All, Active (enabled) and Inactive (disabled)', async () => {
    const { user } = await renderPage([
      installedService({ id: 1, display_name: 'On', enabled: true }),
      installedService({ id: 2, display_name: 'Off', enabled: false }),
    ]);
    expect(await screen.findAllByTestId('service-card')).toHaveLength(2);
    await user.click(screen.getByRole('tab', { name: /Active/ }));
    expect(screen.getAllByTestId('service-card')).toHaveLength(1);
    expect(screen.getByRole('heading', { name: 'On' })).toBeInTheDocument();
    await user.click(screen.getByRole('tab', { name: /Inactive/ }));
    expect(screen.getByRole('heading', { name: 'Off' })).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'On' })).not.toBeInTheDocument();
  });

  it("says 'No services found' when a tab is empty", async () => {
    const { user } = await renderPage([installedService({ enabled: true })]);
    await screen.findByTestId('service-card');
    await user.click(screen.getByRole('tab', { name: /Inactive/ }));
    expect(screen.getByText('No services found')).toBeInTheDocument();
  });

  it('shows the loading error with a retry', async () => {
    storeSession(USER);
    let failing = true;
    fakeApi({ 'GET /api/mcp_market/installed': () => (failing ? fail(500, 'database down') : ok([installedService()])) });
    const user = userEvent.setup();
    await renderWithProviders(<ServicesPage />);
    expect(await screen.findByRole('alert')).toHaveTextContent('database down');
    failing = false;
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByTestId('service-card')).toBeInTheDocument();
  });
});

describe('services page: usage bar', () => {
  it('shows count / limit, the colour and the remaining text only when a limit is set', async () => {
    await renderPage([
      installedService({ id: 1, display_name: 'Green', rpd_limit: 10, user_daily_request_count: 3, remaining_requests: 7 }),
      installedService({ id: 2, display_name: 'Yellow', rpd_limit: 10, user_daily_request_count: 8, remaining_requests: 2 }),
      installedService({ id: 3, display_name: 'Red', rpd_limit: 10, user_daily_request_count: 10, remaining_requests: 0 }),
      installedService({ id: 4, display_name: 'Unlimited', rpd_limit: 0, user_daily_request_count: 50 }),
      installedService({ id: 5, display_name: 'NoRemaining', rpd_limit: 4, user_daily_request_count: 1, remaining_requests: -1 }),
    ]);
    const card = (name: string) => screen.getByRole('group', { name });
    await screen.findAllByTestId('service-card');
    const bar = (name: string) => within(card(name)).getByRole('progressbar').firstElementChild;
    expect(within(card('Green')).getByTestId('usage-count')).toHaveTextContent('3 / 10');
    expect(bar('Green')).toHaveAttribute('data-tone', 'green');
    expect(bar('Yellow')).toHaveAttribute('data-tone', 'yellow');
    expect(bar('Red')).toHaveAttribute('data-tone', 'red');
    expect(within(card('Green')).getByText('7 requests remaining')).toBeInTheDocument();
    expect(within(card('Red')).getByText('0 requests remaining')).toBeInTheDocument();
    expect(within(card('Unlimited')).queryByTestId('usage-bar')).not.toBeInTheDocument();
    expect(within(card('NoRemaining')).getByTestId('usage-bar')).toBeInTheDocument();
    expect(within(card('NoRemaining')).queryByTestId('usage-remaining')).not.toBeInTheDocument();
  });
});

describe('services page: roles', () => {
  it('gives admins the Add Service menu, edit and uninstall; users get none of them and a read-only switch', async () => {
    const { user } = await renderPage([installedService({ display_name: 'Everything' })]);
    await screen.findByTestId('service-card');
    await user.click(screen.getByRole('button', { name: /Add Service/ }));
    expect(await screen.findByRole('menuitem', { name: 'Batch Import' })).toBeInTheDocument();
    expect(screen.getByRole('menuitem', { name: 'Install from Market' })).toBeInTheDocument();
    expect(screen.getByRole('menuitem', { name: 'Custom Install' })).toBeInTheDocument();
    await user.keyboard('{Escape}');
    expect(screen.getByRole('button', { name: 'Edit Everything' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Uninstall Everything' })).toBeInTheDocument();
    expect(screen.getByRole('switch', { name: 'Enable Everything' })).toBeEnabled();
  });

  it('hides the admin controls from users', async () => {
    await renderPage([installedService({ display_name: 'Everything' })], USER);
    await screen.findByTestId('service-card');
    expect(screen.queryByRole('button', { name: /Add Service/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit Everything' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Uninstall Everything' })).not.toBeInTheDocument();
    // The user's own, personal switch (issue 14).
    expect(screen.getByRole('switch', { name: 'Enable Everything' })).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Configure' })).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Check health of Everything' })).toBeEnabled();
  });

  it('gives users a personal switch: off moves the service to Inactive for them, says so, and leaves its health alone', async () => {
    const { user, api } = await renderPage([installedService({ id: 7, display_name: 'Seven', health_status: 'healthy' })], USER, {
      'POST /api/mcp_services/7/toggle': () => ok({ id: 7, enabled: false, scope: 'personal' }),
    });
    const toggle = await screen.findByRole('switch', { name: 'Enable Seven' });
    await user.click(toggle);
    expect(await screen.findByText('The service is off for you; other users are not affected.')).toBeInTheDocument();
    expect(toggle).not.toBeChecked();
    expect(screen.getByRole('group', { name: 'Seven' }).querySelector('[data-health]')).toHaveAttribute('data-health', 'healthy');
    expect(api.callsTo('POST', '/api/mcp_services/7/toggle')).toHaveLength(1);
  });

  it('shows a user the switch disabled, with the reason, while an admin has the service off for everyone', async () => {
    await renderPage([installedService({ id: 8, display_name: 'Eight', enabled: false, globally_enabled: false })], USER);
    expect(await screen.findByRole('switch', { name: 'Enable Eight' })).toBeDisabled();
  });

  it('shows admins who switched a service off for themselves', async () => {
    await renderPage([installedService({ id: 9, display_name: 'Nine', switched_off_by: ['alice', 'bob'] })], ADMIN);
    expect(await screen.findByText('Switched off by 2 users for themselves: alice, bob')).toBeInTheDocument();
  });
});

describe('services page: toggle and health check (docs/console.md §4)', () => {
  it('runs one action at a time per service, with the controls disabled while busy', async () => {
    const health = deferred<ReturnType<typeof ok>>();
    const { user, api } = await renderPage(
      [installedService({ id: 1, display_name: 'One' }), installedService({ id: 2, display_name: 'Two' })],
      ADMIN,
      { 'POST /api/mcp_services/1/health/check': () => health.promise },
    );
    await screen.findAllByTestId('service-card');
    const check = screen.getByRole('button', { name: 'Check health of One' });
    await user.click(check);
    const busyCheck = screen.getByRole('button', { name: 'Checking…' });
    expect(busyCheck).toBeDisabled();
    expect(screen.getByRole('switch', { name: 'Enable One' })).toBeDisabled();
    // The other service stays usable.
    expect(screen.getByRole('switch', { name: 'Enable Two' })).toBeEnabled();
    await user.click(busyCheck);
    expect(api.callsTo('POST', '/api/mcp_services/1/health/check')).toHaveLength(1);

    health.resolve(ok({ health_status: 'unhealthy', health_details: 'x', last_checked: 1, tool_count: 0 }, 'done'));
    // A check that found the service down reads as a failure, with the server's reason.
    const failed = (await screen.findByText('Health Check: One Is Not Answering')).closest('[data-sonner-toast]');
    expect(failed).toHaveAttribute('data-type', 'error');
    expect(screen.getAllByText('Not answering: x').length).toBeGreaterThan(0);
    expect(screen.getByRole('switch', { name: 'Enable One' })).toBeEnabled();
    expect(screen.getByRole('group', { name: 'One' }).querySelector('[data-health]')).toHaveAttribute('data-health', 'unhealthy');
  });

  it('flips the switch on success and checks health at once after enabling', async () => {
    const { user, api } = await renderPage(
      [installedService({ id: 3, display_name: 'Three', enabled: false, health_status: 'stopped' })],
      ADMIN,
      {
        'POST /api/mcp_services/3/toggle': () => ok({ id: 3, enabled: true, scope: 'global' }, 'Service enabled'),
        'POST /api/mcp_services/3/health/check': () => ok({ health_status: 'healthy', health_details: '', last_checked: 2, tool_count: 5 }),
      },
    );
    const toggle = await screen.findByRole('switch', { name: 'Enable Three' });
    expect(toggle).not.toBeChecked();
    await user.click(toggle);
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_services/3/health/check')).toHaveLength(1));
    expect(toggle).toBeChecked();
    await waitFor(() => expect(toggle).toBeEnabled());
    expect(api.callsTo('POST', '/api/mcp_services/3/toggle')).toHaveLength(1);
  });

  it('keeps the switch where the toggle put it when a refresh that read the list before answers after it', async () => {
    const six = (enabled: boolean) => installedService({ id: 6, display_name: 'Six', enabled, globally_enabled: enabled });
    let enabled = true;
    let held: ReturnType<typeof deferred<FakeReply>> | undefined;
    storeSession(ADMIN);
    const api = fakeApi({
      'GET /api/mcp_market/installed': () => held?.promise ?? ok([six(enabled)]),
      'POST /api/mcp_services/6/toggle': () => {
        enabled = false;
        return ok({ id: 6, enabled: false, scope: 'global' });
      },
    });
    const user = userEvent.setup();
    const { queryClient } = await renderWithProviders(<ServicesPage />, { path: '/services' });
    const toggle = await screen.findByRole('switch', { name: 'Enable Six' });
    // A refresh (the page's own, every 30 s) reads the list while the service is on, and answers late.
    const slow = deferred<FakeReply>();
    held = slow;
    void queryClient.invalidateQueries({ queryKey: installedServicesKey });
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/installed')).toHaveLength(2));
    held = undefined;
    await user.click(toggle);
    expect(await screen.findByText('Service Status Updated')).toBeInTheDocument();
    expect(toggle).not.toBeChecked();
    await act(async () => {
      slow.resolve(ok([six(true)]));
      await new Promise((r) => setTimeout(r, 50));
    });
    // The late answer of the old list does not turn it back on; the list is asked for again, after the change.
    expect(screen.getByRole('switch', { name: 'Enable Six' })).not.toBeChecked();
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/installed')).toHaveLength(3));
    expect(screen.getByRole('switch', { name: 'Enable Six' })).not.toBeChecked();
  });

  it('does not check health after disabling', async () => {
    const { user, api } = await renderPage([installedService({ id: 4, display_name: 'Four', enabled: true })], ADMIN, {
      'POST /api/mcp_services/4/toggle': () => ok({ id: 4, enabled: false, scope: 'global' }),
    });
    const toggle = await screen.findByRole('switch', { name: 'Enable Four' });
    await user.click(toggle);
    expect(await screen.findByText('Service Status Updated')).toBeInTheDocument();
    expect(toggle).not.toBeChecked();
    expect(api.callsTo('POST', '/api/mcp_services/4/health/check')).toHaveLength(0);
  });

  it("shows 'Toggle Failed' with the server's message and keeps the state", async () => {
    const { user } = await renderPage([installedService({ id: 5, display_name: 'Five', enabled: true })], ADMIN, {
      'POST /api/mcp_services/5/toggle': () => fail(400, 'cannot toggle now'),
    });
    const toggle = await screen.findByRole('switch', { name: 'Enable Five' });
    await user.click(toggle);
    expect(await screen.findByText('Toggle Failed')).toBeInTheDocument();
    expect(screen.getByText('cannot toggle now')).toBeInTheDocument();
    expect(toggle).toBeChecked();
  });

  it("refuses an id that is not an integer: 'Invalid Service ID format.'", async () => {
    const { user, api } = await renderPage([installedService({ id: 1.5 as number, display_name: 'Odd' })]);
    await user.click(await screen.findByRole('button', { name: 'Check health of Odd' }));
    expect(await screen.findByText('Invalid Service ID format.')).toBeInTheDocument();
    expect(api.calls.filter((c) => c.url.pathname.includes('/mcp_services/'))).toHaveLength(0);
  });
});

describe('services page: uninstall', () => {
  it('asks first, then uninstalls and removes the service', async () => {
    const { user, api } = await renderPage([installedService({ id: 9, display_name: 'Nine' })], ADMIN, {
      'POST /api/mcp_market/uninstall': () => ok(undefined, 'Service uninstalled'),
    });
    await user.click(await screen.findByRole('button', { name: 'Uninstall Nine' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Confirm Uninstallation' });
    expect(confirm).toHaveTextContent('Are you sure you want to uninstall Nine? This action cannot be undone.');
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')).toHaveLength(0);

    await user.click(screen.getByRole('button', { name: 'Uninstall Nine' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Service Uninstalled')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')[0]?.body).toEqual({ service_id: 9 });
  });

  it("says 'Cannot Uninstall' when the numeric service id is missing", async () => {
    const { user, api } = await renderPage([
      installedService({ id: 8, display_name: 'Eight', installed_service_id: undefined as unknown as number }),
    ]);
    await user.click(await screen.findByRole('button', { name: 'Uninstall Eight' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Cannot Uninstall')).toBeInTheDocument();
    expect(screen.getByText('Service data is incomplete or service ID is missing.')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')).toHaveLength(0);
  });

  it("shows 'Uninstall Failed' with the server's message", async () => {
    const { user } = await renderPage([installedService({ id: 7, display_name: 'Seven' })], ADMIN, {
      'POST /api/mcp_market/uninstall': () => fail(404, 'Service not found'),
    });
    await user.click(await screen.findByRole('button', { name: 'Uninstall Seven' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Uninstall Failed')).toBeInTheDocument();
    expect(screen.getByText('Service not found')).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Seven' })).toBeInTheDocument();
  });
});

describe('services page: a failed install’s reason in the chosen language', () => {
  it('asks for the list again when the language changes, and shows the reason as the server words it for that language', async () => {
    storeSession(ADMIN);
    const reasons: Record<string, string> = {
      en: 'npm exited with code 1',
      'zh-CN': 'npm 以退出码 1 退出',
    };
    const api = fakeApi({
      'GET /api/mcp_market/installed': (req) =>
        ok([
          installedService({
            id: 11,
            display_name: 'Broken',
            enabled: false,
            health_status: 'install_failed',
            health_details: reasons[req.headers.get('accept-language') ?? 'en'] ?? '',
          }),
        ]),
    });
    const { i18n } = await renderWithProviders(<ServicesPage />, { path: '/services' });
    const card = await screen.findByRole('group', { name: 'Broken' });
    expect(card).toHaveTextContent('npm exited with code 1');

    await act(() => i18n.changeLanguage('zh-CN'));
    await waitFor(() => expect(card).toHaveTextContent('npm 以退出码 1 退出'));
    const asked = api.callsTo('GET', '/api/mcp_market/installed').map((c) => c.headers.get('accept-language'));
    expect(asked).toEqual(['en', 'zh-CN']);
  });
});

describe('services page: why a red service is red (issue 15, item 1)', () => {
  const REASON = 'could not start: upstream request failed: fetch failed';

  it('shows the whole reason in a popover with Copy, Reconnect and the logs link; Reconnect re-checks', async () => {
    const { user, api } = await renderPage(
      [installedService({ id: 7, display_name: 'Red', health_status: 'unhealthy', health_details: REASON, tool_count: 0 })],
      ADMIN,
      {
        'POST /api/mcp_services/7/reconnect': () =>
          ok({ health_status: 'healthy', health_details: '13 tools, 792 ms', last_checked: 3, tool_count: 13 }, 'Reconnected'),
      },
    );
    const card = await screen.findByRole('group', { name: 'Red' });
    await user.click(within(card).getByRole('button', { name: 'Why Red does not answer' }));
    const popover = await screen.findByTestId('health-popover');
    expect(within(popover).getByTestId('health-popover-reason')).toHaveTextContent(REASON);
    expect(within(popover).getByRole('link', { name: 'Logs of this service' })).toHaveAttribute('href', '/logs?service_id=7');

    await user.click(within(popover).getByRole('button', { name: /^Copy/ }));
    expect(await navigator.clipboard.readText()).toBe(REASON);
    expect(await screen.findByText('Reason copied')).toBeInTheDocument();

    await user.click(within(popover).getByRole('button', { name: 'Reconnect' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_services/7/reconnect')).toHaveLength(1));
    // The fresh result replaces the red state: the card now says how many tools answered.
    await waitFor(() => expect(card.querySelector('[data-health]')).toHaveAttribute('data-health', 'healthy'));
    expect(within(card).getByTestId('health-reason')).toHaveTextContent('13 tools, answered in 792 ms');
  });

  it('shows users the reason and Copy, but neither Reconnect nor the logs', async () => {
    const { user } = await renderPage(
      [installedService({ id: 8, display_name: 'Red', health_status: 'unhealthy', health_details: REASON })],
      USER,
    );
    await user.click(await screen.findByRole('button', { name: 'Why Red does not answer' }));
    const popover = await screen.findByTestId('health-popover');
    expect(within(popover).getByRole('button', { name: /^Copy/ })).toBeInTheDocument();
    expect(within(popover).queryByRole('button', { name: 'Reconnect' })).not.toBeInTheDocument();
    expect(within(popover).queryByRole('link')).not.toBeInTheDocument();
  });

  it('says it in Chinese, and a failed reconnect is a failure toast', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    const { user } = await renderPage(
      [installedService({ id: 9, display_name: 'Red', health_status: 'unhealthy', health_details: REASON })],
      ADMIN,
      { 'POST /api/mcp_services/9/reconnect': () => fail(400, 'Red 已禁用：启用后才能重新连接') },
    );
    await user.click(await screen.findByRole('button', { name: 'Red 为什么没有响应' }));
    const popover = await screen.findByTestId('health-popover');
    expect(within(popover).getByRole('link', { name: '查看此服务的日志' })).toBeInTheDocument();
    await user.click(within(popover).getByRole('button', { name: '重新连接' }));
    const toast = (await screen.findByText('重新连接失败')).closest('[data-sonner-toast]');
    expect(toast).toHaveAttribute('data-type', 'error');
  });
});
