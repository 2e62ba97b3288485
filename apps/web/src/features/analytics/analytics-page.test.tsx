import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ServiceUtilization } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { type FakeReply, fail, fakeApi, ok, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';
import { formatLatency, toggleSort, visibleRows } from './utilization-rows';

const row = (id: number, name: string, count: number, enabled = true, latency = 12.345): ServiceUtilization => ({
  service_id: id,
  service_name: name,
  display_name: '',
  enabled,
  today_request_count: count,
  today_avg_latency_ms: latency,
});

async function openAnalytics(reply: () => FakeReply, language = 'en') {
  localStorage.setItem('i18nextLng', language);
  storeSession();
  fakeApi({ 'GET /api/analytics/services/utilization': reply });
  const app = await renderApp('/analytics');
  await screen.findByRole('heading', { name: language === 'en' ? 'Analytics' : '统计分析' });
  return app;
}

const namesInOrder = () => screen.getAllByTestId('utilization-row').map((r) => within(r).getAllByRole('cell')[0]?.textContent);

describe('analytics rules', () => {
  it('keeps enabled services only, by request count, ties by name', () => {
    const rows = [row(1, 'b', 5), row(2, 'off', 99, false), row(3, 'a', 5), row(4, 'c', 10)];
    expect(visibleRows(rows, 'desc').map((r) => r.service_name)).toEqual(['c', 'a', 'b']);
    expect(visibleRows(rows, 'asc').map((r) => r.service_name)).toEqual(['a', 'b', 'c']);
  });

  it('toggles between descending and ascending', () => {
    expect(toggleSort('desc')).toBe('asc');
    expect(toggleSort('asc')).toBe('desc');
  });

  it.each([
    [12.345, '12.35'],
    [3, '3.00'],
    [0, '0.00'],
    [Number.NaN, '0.00'],
    [null, '0.00'],
    [undefined, '0.00'],
  ])('latency %s shows as %s', (ms, text) => {
    expect(formatLatency(ms)).toBe(text);
  });
});

describe('analytics page', () => {
  it('lists enabled services, most requests first, and the header flips the order', async () => {
    const user = userEvent.setup();
    await openAnalytics(() =>
      ok([
        { ...row(1, 'fetch', 3, true, 0), display_name: 'Fetch' },
        row(2, 'memory', 250),
        row(3, 'disabled-one', 1000, false),
        row(4, 'time', 40, true, 7.5),
      ]),
    );
    expect(await screen.findAllByTestId('utilization-row')).toHaveLength(3);
    expect(namesInOrder()).toEqual(['memory', 'time', 'Fetchfetch']);
    expect(screen.queryByText('disabled-one')).not.toBeInTheDocument();

    const header = screen.getByRole('columnheader', { name: /Today's requests/ });
    expect(header).toHaveAttribute('aria-sort', 'descending');
    await user.click(within(header).getByRole('button'));
    expect(header).toHaveAttribute('aria-sort', 'ascending');
    expect(namesInOrder()).toEqual(['Fetchfetch', 'time', 'memory']);
    await user.click(within(header).getByRole('button'));
    expect(namesInOrder()).toEqual(['memory', 'time', 'Fetchfetch']);

    const [memory] = screen.getAllByTestId('utilization-row');
    const cells = within(memory as HTMLElement).getAllByRole('cell');
    expect(cells.map((c) => c.textContent)).toEqual(['memory', 'enabled', '250', '12.35']);
    const fetchRow = screen.getAllByTestId('utilization-row')[2] as HTMLElement;
    expect(within(fetchRow).getAllByRole('cell')[3]).toHaveTextContent('0.00');
  });

  it('says so when no service is enabled', async () => {
    await openAnalytics(() => ok([row(1, 'off', 5, false)]), 'zh-CN');
    expect(await screen.findByText('暂无已启用的服务。')).toBeInTheDocument();
  });

  it("a failure shows 'Error fetching stats' with the server's message, as an alert and a toast", async () => {
    await openAnalytics(() => fail(500, 'analytics store unavailable'));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Error fetching stats');
    expect(alert).toHaveTextContent('analytics store unavailable');
    expect(await screen.findAllByText('analytics store unavailable')).toHaveLength(2);
  });

  it("no answer shows 'Network Error'", async () => {
    await openAnalytics(() => 'network-error');
    expect(await screen.findByRole('alert')).toHaveTextContent('Network Error');
  });
});
