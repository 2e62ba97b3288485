import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { AuditEntry } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { type FakeReply, type FakeRequest, fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';
import { instantOf, readAuditSearch, writeAuditSearch } from './audit-query';

const AUDIT = 'GET /api/audit';
const base = new Date(2026, 10, 28, 9, 30, 0).getTime();

const entry = (over: Partial<AuditEntry> & Pick<AuditEntry, 'id'>): AuditEntry => ({
  created_at: base + over.id * 1000,
  actor_type: 'user',
  actor_id: 1,
  actor_name: 'root',
  address: '203.0.113.7',
  action: 'update',
  object_type: 'service',
  object_id: '4',
  outcome: 'ok',
  via: 'PUT /api/mcp_services/:id',
  changes: { params: { id: '4' }, body: { headers_json: { 'X-Api-Key': '********' }, rpd_limit: 5 } },
  ...over,
});

/** 45 entries, newest first: every third a group change by alice, the rest service changes by root. */
function trail(): AuditEntry[] {
  return Array.from({ length: 45 }, (_, i) => {
    const id = 45 - i;
    return id % 3 === 0
      ? entry({ id, actor_id: 7, actor_name: 'alice', object_type: 'group', object_id: '2', action: 'create', via: 'POST /api/groups' })
      : entry({ id });
  });
}

/** Answers like the server: the filters, then one page. */
function store(all: AuditEntry[]) {
  return (req: FakeRequest): FakeReply => {
    const q = req.url.searchParams;
    const page = Number(q.get('page') ?? 1);
    const size = Number(q.get('page_size') ?? 20);
    const actor = q.get('actor');
    const since = q.get('since');
    const until = q.get('until');
    const matching = all.filter(
      (e) =>
        (!actor || e.actor_name === actor || String(e.actor_id) === actor) &&
        (!q.get('object_type') || e.object_type === q.get('object_type')) &&
        (!q.get('object_id') || e.object_id === q.get('object_id')) &&
        (!since || e.created_at >= Number(since)) &&
        (!until || e.created_at < Number(until)),
    );
    return ok({ entries: matching.slice((page - 1) * size, page * size), total: matching.length, page });
  };
}

async function openAudit(reply: (req: FakeRequest) => FakeReply | Promise<FakeReply>, { path = '/audit', language = 'en' } = {}) {
  localStorage.setItem('i18nextLng', language);
  const admin = { role: 10, username: 'root' };
  storeSession(admin);
  const api = fakeApi({ 'GET /api/user/self': () => ok(selfUser(admin)), [AUDIT]: reply });
  const user = userEvent.setup();
  const app = await renderApp(path);
  await screen.findByRole('heading', { name: language === 'en' ? 'Audit' : '审计', level: 1 });
  const lastQuery = () => Object.fromEntries(api.callsTo('GET', '/api/audit').at(-1)?.url.searchParams ?? []);
  return { api, user, app, lastQuery };
}

const rows = () => screen.getAllByTestId('audit-row');

describe('audit page', () => {
  it('shows each entry: time, actor with kind and address, action, object, outcome and the masked change', async () => {
    await openAudit(() =>
      ok({
        entries: [
          entry({ id: 3 }),
          entry({
            id: 2,
            actor_type: 'anonymous',
            actor_id: null,
            actor_name: 'mallory',
            action: 'sign_in',
            object_type: 'session',
            object_id: '',
            outcome: 'refused',
            via: 'POST /api/auth/login',
            changes: { body: { username: 'mallory', password: '********' } },
          }),
          entry({
            id: 1,
            actor_type: 'cli',
            actor_id: null,
            actor_name: 'ops',
            address: '',
            action: 'rotate',
            object_type: 'secret',
            object_id: '',
            via: 'toolport rotate-secret',
          }),
        ],
        total: 3,
        page: 1,
      }),
    );
    expect(await screen.findAllByTestId('audit-row')).toHaveLength(3);
    for (const column of ['Timestamp', 'Actor', 'Action', 'Object', 'Outcome', 'Change']) {
      expect(screen.getByRole('columnheader', { name: column })).toBeInTheDocument();
    }
    const [first, second, third] = rows() as [HTMLElement, HTMLElement, HTMLElement];
    expect(within(first).getAllByRole('cell')[0]).toHaveTextContent('2026-11-28 09:30:03');
    expect(within(first).getAllByRole('cell')[1]).toHaveTextContent('rootUser · 203.0.113.7');
    expect(within(first).getByTestId('audit-action')).toHaveTextContent('Update');
    expect(within(first).getAllByRole('cell')[3]).toHaveTextContent('Service#4');
    expect(within(first).getByText('Done')).toHaveAttribute('data-outcome', 'ok');
    expect(JSON.parse(within(first).getByTestId('audit-change').textContent ?? '')).toEqual({
      params: { id: '4' },
      body: { headers_json: { 'X-Api-Key': '********' }, rpd_limit: 5 },
    });
    expect(within(second).getByText('Refused')).toHaveAttribute('data-outcome', 'refused');
    expect(within(second).getAllByRole('cell')[1]).toHaveTextContent('malloryNot signed in');
    expect(within(second).getByTestId('audit-action')).toHaveTextContent('Sign in');
    expect(within(third).getAllByRole('cell')[1]).toHaveTextContent('opsCommand line');
    expect(within(third).getByTestId('audit-object')).toHaveTextContent('Secret key');
    expect(screen.getByTestId('logs-showing')).toHaveTextContent('Showing 1 to 3 of 3');
  });

  it('filters by actor, object and time, keeps them in the address, and pages', async () => {
    const { user, app, lastQuery } = await openAudit(store(trail()));
    expect(await screen.findAllByTestId('audit-row')).toHaveLength(20);
    expect(lastQuery()).toEqual({ page: '1', page_size: '20' });

    await user.type(screen.getByLabelText('Actor'), 'alice');
    await user.selectOptions(screen.getByLabelText('Object'), 'group');
    await user.type(screen.getByLabelText('Object ID'), '2');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(rows()).toHaveLength(15));
    expect(lastQuery()).toEqual({ page: '1', page_size: '20', actor: 'alice', object_type: 'group', object_id: '2' });
    expect(app.router.state.location.search).toBe('?actor=alice&object_type=group&object_id=2');
    expect(screen.getAllByTestId('audit-actor').every((a) => a.textContent === 'alice')).toBe(true);

    // A time range: sent as epoch milliseconds of the browser's zone.
    const since = '2026-11-28T09:30';
    fireInput(screen.getByLabelText('From'), since);
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(lastQuery().since).toBe(String(new Date(since).getTime())));

    // An end before the start is refused in the form, in words.
    fireInput(screen.getByLabelText('Until'), '2026-11-27T09:30');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The end must be after the start.');

    await user.click(screen.getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(rows()).toHaveLength(20));
    expect(lastQuery()).toEqual({ page: '1', page_size: '20' });
    await user.click(screen.getByRole('button', { name: 'Page 3' }));
    await waitFor(() => expect(rows()).toHaveLength(5));
    expect(screen.getByTestId('logs-showing')).toHaveTextContent('Showing 41 to 45 of 45');
  });

  it('speaks Chinese, and says why when the trail cannot be loaded', async () => {
    await openAudit(() => fail(500, '数据库不可用'), { language: 'zh-CN' });
    expect(await screen.findByText('加载审计记录失败', { selector: 'p' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '导出 JSON Lines' })).toBeInTheDocument();
    expect(screen.getByLabelText('操作者')).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: '操作者' })).toBeInTheDocument();
  });

  it('reads and writes its address: unknown values count as no filter', () => {
    const { filters, page } = readAuditSearch(new URLSearchParams('actor=%20bob%20&object_type=nonsense&since=yesterday&page=-3'));
    expect(filters).toEqual({ actor: 'bob', objectType: 'all', objectId: '', since: '', until: '' });
    expect(page).toBe(1);
    expect(writeAuditSearch({ ...filters, objectType: 'user', until: '2026-11-28T10:00' }, 2).toString()).toBe(
      'actor=bob&object_type=user&until=2026-11-28T10%3A00&page=2',
    );
    expect(instantOf('2026-11-28T10:00')).toBe(new Date(2026, 10, 28, 10, 0).getTime());
    expect(instantOf('2026-11-28')).toBeUndefined();
  });
});

/** datetime-local inputs take a whole value at once (typing into them is not what a browser does). */
function fireInput(input: HTMLElement, value: string): void {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set;
  setter?.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}
