import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { LogEntry } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { formatLogTime } from '../../lib/log-time';
import { type FakeReply, type FakeRequest, fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

const LOGS = 'GET /api/mcp_logs';
const base = new Date(2026, 5, 1, 9, 30, 0).getTime();

/** `count` lines, newest first: service 1 'weather' installs then runs, every fifth line a warning, every seventh an error. */
function lines(count: number): LogEntry[] {
  return Array.from({ length: count }, (_, i) => {
    const n = count - 1 - i;
    return {
      id: n + 1,
      created_at: base + n * 1000,
      service_id: n % 2 === 0 ? 1 : 2,
      service_name: n % 2 === 0 ? 'weather' : 'web_search',
      phase: n < 10 ? 'install' : 'run',
      level: n % 7 === 0 ? 'error' : n % 5 === 0 ? 'warn' : 'info',
      message: `line ${n}`,
    };
  });
}

/** Answers like the server: filters, then one page of `page_size`. */
function logStore(all: LogEntry[]) {
  return (req: FakeRequest): FakeReply => {
    const q = req.url.searchParams;
    const page = Number(q.get('page') ?? 1);
    const size = Number(q.get('page_size') ?? 20);
    const id = q.get('service_id');
    const name = q.get('service_name')?.toLowerCase();
    const matching = all.filter(
      (l) =>
        (!id || l.service_id === Number(id)) &&
        (!name || l.service_name.toLowerCase().includes(name)) &&
        (!q.get('phase') || l.phase === q.get('phase')) &&
        (!q.get('level') || l.level === q.get('level')),
    );
    return ok({ logs: matching.slice((page - 1) * size, page * size), total: matching.length, page });
  };
}

async function openLogs(reply: (req: FakeRequest) => FakeReply | Promise<FakeReply>, { path = '/logs', language = 'en' } = {}) {
  localStorage.setItem('i18nextLng', language);
  const admin = { role: 10, username: 'root' };
  storeSession(admin);
  const api = fakeApi({ 'GET /api/user/self': () => ok(selfUser(admin)), [LOGS]: reply });
  const user = userEvent.setup();
  const app = await renderApp(path);
  await screen.findByRole('heading', { name: language === 'en' ? 'Logs' : '日志', level: 1 });
  const logCalls = () => api.callsTo('GET', '/api/mcp_logs');
  /** The query of the latest logs request, as a plain object. */
  const lastQuery = () => Object.fromEntries(logCalls().at(-1)?.url.searchParams ?? []);
  return { api, user, app, logCalls, lastQuery };
}

const rows = () => screen.getAllByTestId('log-row');
const messages = () => screen.getAllByTestId('log-message').map((m) => m.textContent);
const showing = () => screen.getByTestId('logs-showing').textContent;
const pageButtons = () =>
  within(screen.getByRole('navigation', { name: 'Pages' }))
    .getAllByRole('button', { name: /^Page \d+$/ })
    .map((b) => b.textContent);

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('logs page: the table (docs/console.md §2.15)', () => {
  it('shows a loading state, then each line with its time, service name and id, phase and level badges and message', async () => {
    const answer = deferred<FakeReply>();
    const entries: LogEntry[] = [
      { id: 3, created_at: base + 2000, service_id: 4, service_name: 'weather', phase: 'run', level: 'error', message: 'boom\n  at x' },
      { id: 2, created_at: base + 1000, service_id: 4, service_name: 'weather', phase: 'install', level: 'warn', message: 'slow mirror' },
      { id: 1, created_at: base, service_id: null, service_name: '', phase: 'run', level: 'info', message: '3 log lines dropped' },
    ];
    await openLogs(() => answer.promise);
    expect(await screen.findAllByTestId('log-skeleton')).not.toHaveLength(0);
    expect(screen.getByRole('table')).toHaveAttribute('aria-busy', 'true');
    expect(screen.queryByTestId('logs-showing')).not.toBeInTheDocument();

    answer.resolve(ok({ logs: entries, total: 3, page: 1 }));
    expect(await screen.findAllByTestId('log-row')).toHaveLength(3);
    expect(screen.queryByTestId('log-skeleton')).not.toBeInTheDocument();
    for (const column of ['Timestamp', 'Service', 'Phase', 'Level', 'Message']) {
      expect(screen.getByRole('columnheader', { name: column })).toBeInTheDocument();
    }

    const [first, second, third] = rows() as [HTMLElement, HTMLElement, HTMLElement];
    const cells = within(first).getAllByRole('cell');
    expect(cells[0]).toHaveTextContent('2026-06-01 09:30:02');
    expect(within(first).getByRole('time')).toHaveAttribute('dateTime', new Date(base + 2000).toISOString());
    expect(cells[1]).toHaveTextContent('weather#4');
    expect(within(first).getByText('Run')).toHaveAttribute('data-phase', 'run');
    const error = within(first).getByText('Error');
    expect(error).toHaveAttribute('data-level', 'error');
    expect(error.querySelector('svg')).not.toBeNull();
    expect(within(first).getByTestId('log-message').textContent).toBe('boom\n  at x');

    expect(within(second).getByText('Install')).toHaveAttribute('data-phase', 'install');
    expect(within(second).getByText('Warn')).toHaveAttribute('data-level', 'warn');
    expect(within(third).getByText('Gateway')).toBeInTheDocument();
    expect(within(third).queryByTestId('log-service-id')).not.toBeInTheDocument();
    expect(within(third).getByText('Info').querySelector('svg')).not.toBeNull();
    expect(showing()).toBe('Showing 1 to 3 of 3');
  });

  it('formats times as YYYY-MM-DD HH:mm:ss in the browser’s zone', () => {
    expect(formatLogTime(new Date(2026, 0, 2, 3, 4, 5, 678).getTime())).toBe('2026-01-02 03:04:05');
    expect(formatLogTime(Number.NaN)).toBe('');
  });

  it("says 'No logs found' when the log is empty, with no pager", async () => {
    await openLogs(() => ok({ logs: [], total: 0, page: 1 }));
    expect(await screen.findByText('No logs found')).toBeInTheDocument();
    expect(screen.getByText('Services have not written anything yet.')).toBeInTheDocument();
    expect(screen.queryByTestId('log-row')).not.toBeInTheDocument();
    expect(screen.queryByTestId('logs-showing')).not.toBeInTheDocument();
    expect(screen.queryByRole('navigation', { name: 'Pages' })).not.toBeInTheDocument();
  });

  it('says the filters match nothing when filters are set', async () => {
    const { user } = await openLogs(logStore(lines(5)));
    await screen.findAllByTestId('log-row');
    await user.type(screen.getByLabelText('Service name'), 'nothing-like-this{Enter}');
    expect(await screen.findByText('No lines match these filters. Clear them to see the whole log.')).toBeInTheDocument();
    expect(screen.getByText('No logs found')).toBeInTheDocument();
  });
});

describe('logs page: filters (what query is sent)', () => {
  it('first asks for page 1 of 20 lines with no filter', async () => {
    const { lastQuery } = await openLogs(logStore(lines(45)));
    await screen.findAllByTestId('log-row');
    expect(lastQuery()).toEqual({ page: '1', page_size: '20' });
  });

  it('sends service id, service name, phase and level on Search, from page 1', async () => {
    const { user, lastQuery, logCalls, app } = await openLogs(logStore(lines(45)), { path: '/logs?page=2' });
    await screen.findAllByTestId('log-row');
    expect(lastQuery().page).toBe('2');
    const before = logCalls().length;
    await user.type(screen.getByLabelText('Service ID'), ' 01 ');
    await user.type(screen.getByLabelText('Service name'), ' Weath ');
    await user.selectOptions(screen.getByLabelText('Phase'), 'Run');
    await user.selectOptions(screen.getByLabelText('Level'), 'Warn');
    // Nothing applies before Search.
    expect(logCalls()).toHaveLength(before);
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() =>
      expect(lastQuery()).toEqual({ page: '1', page_size: '20', service_id: '1', service_name: 'Weath', phase: 'run', level: 'warn' }),
    );
    expect(app.router.state.location.search).toBe('?service_id=1&service_name=Weath&phase=run&level=warn');
    await waitFor(() => expect(messages()).toEqual(['line 40', 'line 30', 'line 20', 'line 10']));
  });

  it('Enter in a field searches too; phase and level alone send just those', async () => {
    const { user, lastQuery } = await openLogs(logStore(lines(45)));
    await screen.findAllByTestId('log-row');
    await user.selectOptions(screen.getByLabelText('Phase'), 'install');
    await user.selectOptions(screen.getByLabelText('Level'), 'error');
    await user.type(screen.getByLabelText('Service name'), '{Enter}');
    await waitFor(() => expect(lastQuery()).toEqual({ page: '1', page_size: '20', phase: 'install', level: 'error' }));
    await waitFor(() => expect(messages()).toEqual(['line 7', 'line 0']));
  });

  it('Clear empties every field and asks for the whole log again', async () => {
    const { user, lastQuery } = await openLogs(logStore(lines(45)), { path: '/logs?service_id=2&service_name=web&phase=run&level=info' });
    await screen.findAllByTestId('log-row');
    expect(lastQuery()).toEqual({ page: '1', page_size: '20', service_id: '2', service_name: 'web', phase: 'run', level: 'info' });
    expect(screen.getByLabelText('Service ID')).toHaveValue('2');
    expect(screen.getByLabelText('Service name')).toHaveValue('web');
    expect(screen.getByLabelText('Phase')).toHaveValue('run');
    expect(screen.getByLabelText('Level')).toHaveValue('info');

    await user.click(screen.getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(lastQuery()).toEqual({ page: '1', page_size: '20' }));
    expect(screen.getByLabelText('Service ID')).toHaveValue('');
    expect(screen.getByLabelText('Service name')).toHaveValue('');
    expect(screen.getByLabelText('Phase')).toHaveValue('all');
    expect(screen.getByLabelText('Level')).toHaveValue('all');
    await waitFor(() => expect(showing()).toBe('Showing 1 to 20 of 45'));
  });

  it('refuses a service id that is not a whole number, without a request', async () => {
    const { user, logCalls } = await openLogs(logStore(lines(45)));
    await screen.findAllByTestId('log-row');
    const calls = logCalls().length;
    const field = screen.getByLabelText('Service ID');
    await user.type(field, '1.5');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The service ID must be a whole number.');
    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(logCalls()).toHaveLength(calls);
    await user.type(field, '{Backspace}{Backspace}');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('searching again with the same filters reloads, for lines that arrived since', async () => {
    let all = lines(3);
    const store = (req: FakeRequest) => logStore(all)(req);
    const { user, logCalls } = await openLogs(store);
    await screen.findAllByTestId('log-row');
    const calls = logCalls().length;
    all = lines(4);
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(rows()).toHaveLength(4));
    expect(logCalls()).toHaveLength(calls + 1);
  });

  it('follows the address back to the previous filters', async () => {
    const { user, app } = await openLogs(logStore(lines(45)), { path: '/logs?service_name=weather' });
    await screen.findAllByTestId('log-row');
    await user.clear(screen.getByLabelText('Service name'));
    await user.type(screen.getByLabelText('Service name'), 'web{Enter}');
    await waitFor(() => expect(app.router.state.location.search).toBe('?service_name=web'));
    await app.router.navigate(-1);
    await waitFor(() => expect(screen.getByLabelText('Service name')).toHaveValue('weather'));
  });
});

describe('logs page: pages', () => {
  it("pages with the buttons, Previous and Next, and says 'Showing start to end of total'", async () => {
    const { user, lastQuery } = await openLogs(logStore(lines(45)));
    await screen.findAllByTestId('log-row');
    expect(showing()).toBe('Showing 1 to 20 of 45');
    expect(pageButtons()).toEqual(['1', '2', '3']);
    expect(screen.getByRole('button', { name: 'Page 1' })).toHaveAttribute('aria-current', 'page');
    expect(screen.getByRole('button', { name: 'Previous' })).toBeDisabled();
    expect(messages()[0]).toBe('line 44');

    await user.click(screen.getByRole('button', { name: 'Page 3' }));
    await waitFor(() => expect(showing()).toBe('Showing 41 to 45 of 45'));
    expect(lastQuery()).toEqual({ page: '3', page_size: '20' });
    expect(messages()).toEqual(['line 4', 'line 3', 'line 2', 'line 1', 'line 0']);
    expect(screen.getByRole('button', { name: 'Next' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Page 3' })).toHaveAttribute('aria-current', 'page');

    await user.click(screen.getByRole('button', { name: 'Previous' }));
    await waitFor(() => expect(showing()).toBe('Showing 21 to 40 of 45'));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(showing()).toBe('Showing 41 to 45 of 45'));
  });

  it('moves the five-button window along a long log', async () => {
    const { user } = await openLogs(logStore(lines(210)));
    await screen.findAllByTestId('log-row');
    expect(pageButtons()).toEqual(['1', '2', '3', '4', '5']);
    await user.click(screen.getByRole('button', { name: 'Page 5' }));
    await waitFor(() => expect(pageButtons()).toEqual(['3', '4', '5', '6', '7']));
    // The buttons move at once; the range follows when page 5 has come.
    await waitFor(() => expect(showing()).toBe('Showing 81 to 100 of 210'));
    await user.click(screen.getByRole('button', { name: 'Page 7' }));
    await waitFor(() => expect(pageButtons()).toEqual(['5', '6', '7', '8', '9']));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(pageButtons()).toEqual(['6', '7', '8', '9', '10']));
    await user.click(screen.getByRole('button', { name: 'Page 10' }));
    await waitFor(() => expect(pageButtons()).toEqual(['7', '8', '9', '10', '11']));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(showing()).toBe('Showing 201 to 210 of 210'));
    expect(pageButtons()).toEqual(['7', '8', '9', '10', '11']);
    expect(screen.getByRole('button', { name: 'Next' })).toBeDisabled();
  });

  it('a page past the end (an old link) shows the last page instead', async () => {
    const { lastQuery, app } = await openLogs(logStore(lines(45)), { path: '/logs?page=9' });
    await waitFor(() => expect(showing()).toBe('Showing 41 to 45 of 45'));
    expect(lastQuery().page).toBe('3');
    expect(app.router.state.location.search).toBe('?page=3');
  });

  it('reads the text in Chinese', async () => {
    await openLogs(logStore(lines(45)), { language: 'zh-CN', path: '/logs?page=2' });
    expect(await screen.findAllByTestId('log-row')).toHaveLength(20);
    expect(showing()).toBe('显示第 21 到 40 条，共 45 条');
    expect(screen.getByRole('button', { name: '上一页' })).toBeEnabled();
    expect(screen.getByRole('button', { name: '第 2 页' })).toHaveAttribute('aria-current', 'page');
    expect(screen.getAllByText('运行').length).toBeGreaterThan(0);
  });
});

describe('logs page: load errors', () => {
  it('a failed load shows the load-error toast with the server’s message, and Retry loads again', async () => {
    let failing = true;
    const store = logStore(lines(3));
    const { user } = await openLogs((req) => (failing ? fail(500, 'log store unavailable') : store(req)));
    const toast = await screen.findByText('log store unavailable', { selector: '[data-sonner-toast] *' });
    expect(toast.closest('[data-sonner-toast]')).toHaveTextContent('Failed to load logs');
    expect(screen.queryByTestId('logs-showing')).not.toBeInTheDocument();
    failing = false;
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findAllByTestId('log-row')).toHaveLength(3);
  });

  it('no answer shows the network text in the toast', async () => {
    await openLogs(() => 'network-error');
    const toast = await screen.findByText('Network error: please check your network connection', { selector: '[data-sonner-toast] *' });
    expect(toast.closest('[data-sonner-toast]')).toHaveTextContent('Failed to load logs');
  });

  it('a failure while paging keeps the toast to the load error, in Chinese too', async () => {
    let failing = false;
    const store = logStore(lines(45));
    const { user } = await openLogs((req) => (failing ? fail(400, '页码无效') : store(req)), { language: 'zh-CN' });
    await screen.findAllByTestId('log-row');
    failing = true;
    await user.click(screen.getByRole('button', { name: '第 2 页' }));
    const toast = await screen.findByText('页码无效', { selector: '[data-sonner-toast] *' });
    expect(toast.closest('[data-sonner-toast]')).toHaveTextContent('加载日志失败');
    expect(screen.getByRole('button', { name: '重试' })).toBeInTheDocument();
  });
});
