import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { SystemOverview } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { type FakeReply, fail, fakeApi, ok, selfUser, statusData, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

const overview = (o: Partial<SystemOverview> = {}): SystemOverview => ({
  enabled_services: 4,
  healthy_services: 3,
  unhealthy_services: 0,
  today_total_requests: 1234,
  today_avg_response_time_ms: 41.6,
  ...o,
});

async function openDashboard(reply: () => FakeReply | Promise<FakeReply>, { role = 1, language = 'en' } = {}) {
  localStorage.setItem('i18nextLng', language);
  storeSession({ role, display_name: 'Alice Liddell' });
  const startTime = Math.floor(Date.now() / 1000) - (2 * 86_400 + 3 * 3_600 + 5 * 60 + 10);
  const server = fakeApi({
    'GET /api/analytics/system/overview': reply,
    'GET /api/status': () => ok(statusData({ start_time: startTime })),
    'GET /api/user/self': () => ok(selfUser({ role, display_name: 'Alice Liddell' })),
  });
  const app = await renderApp('/');
  await screen.findByRole('heading', { name: language === 'en' ? 'Dashboard' : '仪表盘' });
  return { server, ...app };
}

const statCard = (label: string) => screen.getByText(label).closest('div')?.parentElement as HTMLElement;

describe('dashboard', () => {
  it('shows a placeholder of the final size for every figure while loading', async () => {
    await openDashboard(() => new Promise(() => {}));
    expect(screen.getByText('Welcome back, Alice Liddell')).toBeInTheDocument();
    for (const label of ['Active services', "Today's requests", 'Average response time', 'Remaining credits']) {
      expect(within(statCard(label)).queryByTestId('stat-value')).not.toBeInTheDocument();
    }
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('shows the four counters, response time rounded to whole ms and credits fixed at 0', async () => {
    await openDashboard(() => ok(overview()));
    expect(await within(statCard('Active services')).findByTestId('stat-value')).toHaveTextContent('4');
    expect(within(statCard("Today's requests")).getByTestId('stat-value')).toHaveTextContent('1,234');
    expect(within(statCard('Average response time')).getByTestId('stat-value')).toHaveTextContent('42 ms');
    expect(within(statCard('Remaining credits')).getByTestId('stat-value')).toHaveTextContent('0');
  });

  it('system status: uptime from the start time, enabled and healthy counts, no unhealthy row at 0', async () => {
    await openDashboard(() => ok(overview()));
    // The rows are there from the first render (with a placeholder): wait for both answers, in whichever order.
    await waitFor(() => expect(screen.getByTestId('uptime')).toHaveTextContent('2 days 3 hours 5 minutes'));
    await waitFor(() => expect(screen.getByTestId('enabled-services')).toHaveTextContent('4'));
    expect(screen.getByTestId('healthy-services')).toHaveTextContent('3');
    expect(screen.queryByTestId('unhealthy-services')).not.toBeInTheDocument();
    expect(screen.queryByText('Unhealthy')).not.toBeInTheDocument();
  });

  it('shows unhealthy services when there are any, in Chinese too', async () => {
    await openDashboard(() => ok(overview({ unhealthy_services: 2 })), { language: 'zh-CN' });
    expect(await screen.findByTestId('unhealthy-services')).toHaveTextContent('2');
    expect(screen.getByText('不健康')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId('uptime')).toHaveTextContent('2 天 3 小时 5 分钟'));
    expect(within(statCard('平均响应时间')).getByTestId('stat-value')).toHaveTextContent('42 毫秒');
  });

  it.each([
    [1, false],
    [10, true],
    [100, true],
  ])('role %i sees the install-service quick action: %s', async (role, shown) => {
    await openDashboard(() => ok(overview()), { role });
    const quick = screen.getByRole('heading', { name: 'Quick actions' }).closest('div')?.parentElement as HTMLElement;
    expect(within(quick).getByRole('link', { name: 'Manage services' })).toHaveAttribute('href', '/services');
    expect(within(quick).getByRole('link', { name: 'View analytics' })).toHaveAttribute('href', '/analytics');
    expect(within(quick).getByRole('link', { name: 'Profile and API key' })).toHaveAttribute('href', '/profile');
    expect(within(quick).queryByRole('link', { name: 'Install service' }) !== null).toBe(shown);
  });

  it('shows the static sample activity table', async () => {
    await openDashboard(() => ok(overview()));
    const table = screen.getByRole('table');
    expect(within(table).getAllByRole('row')).toHaveLength(5);
    expect(within(table).getByText('read_file')).toBeInTheDocument();
    expect(screen.getByText('Sample data')).toBeInTheDocument();
  });

  it("an error shows the server's message in place of the figures, and Retry loads again", async () => {
    let reply: FakeReply = fail(500, 'database unreachable');
    const user = userEvent.setup();
    const { server } = await openDashboard(() => reply);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Dashboard unavailable');
    expect(alert).toHaveTextContent('database unreachable');
    expect(screen.queryByText('Active services')).not.toBeInTheDocument();

    reply = ok(overview());
    await user.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await within(statCard('Active services')).findByTestId('stat-value')).toHaveTextContent('4');
    expect(server.callsTo('GET', '/api/analytics/system/overview')).toHaveLength(2);
  });

  it('a network failure shows the translated fetch-failed message', async () => {
    await openDashboard(() => 'network-error', { language: 'zh-CN' });
    expect(await screen.findByRole('alert')).toHaveTextContent('无法加载仪表盘数据。');
  });
});
