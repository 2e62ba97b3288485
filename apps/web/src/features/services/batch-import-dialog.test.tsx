import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type FakeReply, fail, fakeApi, ok, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { ServicesPage } from './services-page';

/** The browser's EventSource, driven by the test: `emit` delivers a message, `fail` an error. */
class FakeEventSource {
  static instances: FakeEventSource[] = [];
  onmessage: ((event: MessageEvent<string>) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }
  close() {
    this.closed = true;
  }
  emit(data: unknown) {
    act(() => this.onmessage?.(new MessageEvent('message', { data: JSON.stringify(data) })));
  }
  fail() {
    act(() => this.onerror?.(new Event('error')));
  }
}

const DOC = '{"mcpServers":{"a":{"url":"https://a.test/mcp"},"b":{"command":"npx","args":["-y","b"]}}}';

async function openBatch(start: () => FakeReply = () => ok({ task_id: 'batch-1' })) {
  FakeEventSource.instances = [];
  vi.stubGlobal('EventSource', FakeEventSource);
  storeSession({ role: 10 }, 'access-xyz');
  const api = fakeApi({ 'GET /api/mcp_market/installed': () => ok([installedService()]), 'POST /api/mcp_market/batch-import': start });
  const user = userEvent.setup();
  await renderWithProviders(<ServicesPage />);
  await user.click(await screen.findByRole('button', { name: /Add Service/ }));
  await user.click(await screen.findByRole('menuitem', { name: 'Batch Import' }));
  const dialog = await screen.findByRole('dialog', { name: 'Batch Import' });
  const type = async (text: string) => {
    const area = within(dialog).getByLabelText('JSON');
    await user.clear(area);
    // user-event reads { and [ as key descriptors: paste instead.
    await user.click(area);
    await user.paste(text);
  };
  return { api, user, dialog, type, importButton: () => within(dialog).getByRole('button', { name: 'Import' }) };
}

describe('batch import dialog (docs/console.md §2.9, §4)', () => {
  beforeEach(() => {
    FakeEventSource.instances = [];
  });

  it('disables Import while the text is empty', async () => {
    const { importButton, type } = await openBatch();
    expect(importButton()).toBeDisabled();
    await type('   ');
    expect(importButton()).toBeDisabled();
    await type('{}');
    expect(importButton()).toBeEnabled();
  });

  it('alerts on invalid JSON and sends nothing', async () => {
    const { user, type, importButton, api, dialog } = await openBatch();
    await type('{"mcpServers": ');
    await user.click(importButton());
    expect(within(dialog).getByRole('alert')).toHaveTextContent('The text is not valid JSON.');
    expect(api.callsTo('POST', '/api/mcp_market/batch-import')).toHaveLength(0);
  });

  it('shows live progress from the event stream, then the report', async () => {
    const { user, type, importButton, api, dialog } = await openBatch();
    await type(DOC);
    await user.click(importButton());
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    expect(api.callsTo('POST', '/api/mcp_market/batch-import')[0]?.body).toEqual(DOC);
    const stream = FakeEventSource.instances[0] as FakeEventSource;
    expect(stream.url).toBe('/api/mcp_market/batch-import/progress/batch-1?token=access-xyz');
    expect(within(dialog).getByRole('button', { name: 'Importing…' })).toBeDisabled();
    expect(within(dialog).getByText('Waiting for the first result…')).toBeInTheDocument();

    stream.emit({ name: 'a', status: 'success', message: 'created' });
    expect(await within(dialog).findByText('a')).toBeInTheDocument();
    stream.emit({ name: 'b', status: 'skipped', message: 'already exists', warnings: ['b keeps its own tool overrides and access'] });
    stream.emit({ name: 'c', status: 'failed', message: 'bad command' });
    expect(within(dialog).getAllByTestId('batch-item')).toHaveLength(3);
    // A warning of an item imported in part shows under its line.
    expect(within(dialog).getByTestId('batch-item-warning')).toHaveTextContent('b keeps its own tool overrides and access');

    const listLoads = api.callsTo('GET', '/api/mcp_market/installed').length;
    stream.emit({ status: 'done', summary: { success: 1, skipped: 1, failed: 1 } });
    expect(await within(dialog).findByText('Import report')).toBeInTheDocument();
    expect(stream.closed).toBe(true);
    expect(within(dialog).getByTestId('batch-count-success')).toHaveTextContent('1');
    expect(within(dialog).getByTestId('batch-count-skipped')).toHaveTextContent('1');
    expect(within(dialog).getByTestId('batch-count-failed')).toHaveTextContent('1');
    const lines = within(dialog).getAllByTestId('batch-item');
    expect(lines.map((l) => l.dataset.status)).toEqual(['success', 'skipped', 'failed']);
    expect(lines[0]?.querySelector('[aria-hidden]')).toHaveClass('bg-emerald-500');
    expect(lines[1]?.querySelector('[aria-hidden]')).toHaveClass('bg-amber-400');
    expect(lines[2]?.querySelector('[aria-hidden]')).toHaveClass('bg-red-500');
    expect(lines[2]).toHaveTextContent('bad command');
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/installed').length).toBeGreaterThan(listLoads));
  });

  it('returns to the input with a connection error when the stream breaks', async () => {
    const { user, type, importButton, dialog } = await openBatch();
    await type(DOC);
    await user.click(importButton());
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    const stream = FakeEventSource.instances[0] as FakeEventSource;
    stream.emit({ name: 'a', status: 'success', message: '' });
    stream.fail();
    expect(await within(dialog).findByRole('alert')).toHaveTextContent('Connection error, please retry');
    expect(stream.closed).toBe(true);
    expect(within(dialog).getByLabelText('JSON')).toHaveValue(DOC);
    expect(importButton()).toBeEnabled();
  });

  it('returns to the input when the import cannot start', async () => {
    const { user, type, importButton, dialog } = await openBatch(() => fail(400, 'mcpServers must be an object'));
    await type('[1,2]');
    await user.click(importButton());
    const alert = await within(dialog).findByRole('alert');
    expect(alert).toHaveTextContent('The import could not be started.');
    expect(alert).toHaveTextContent('mcpServers must be an object');
    expect(FakeEventSource.instances).toHaveLength(0);
    expect(importButton()).toBeEnabled();
  });

  it('sends a server name given twice as typed, and shows the server naming it', async () => {
    const message = 'The configuration names the server "a" twice; keep one entry under each name';
    const { user, type, importButton, dialog, api } = await openBatch(() => fail(400, message));
    const text = '{"mcpServers":{"a":{"command":"npx"},"a":{"command":"uvx"}}}';
    await type(text);
    await user.click(importButton());
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(message);
    expect(api.callsTo('POST', '/api/mcp_market/batch-import')[0]?.body).toBe(text);
  });

  it('shows the connection error in Chinese', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    const { user, type, dialog } = await (async () => {
      FakeEventSource.instances = [];
      vi.stubGlobal('EventSource', FakeEventSource);
      storeSession({ role: 10 });
      fakeApi({ 'GET /api/mcp_market/installed': () => ok([]), 'POST /api/mcp_market/batch-import': () => ok({ task_id: 't' }) });
      const u = userEvent.setup();
      await renderWithProviders(<ServicesPage />);
      await u.click(await screen.findByRole('button', { name: /添加服务/ }));
      await u.click(await screen.findByRole('menuitem', { name: '批量导入' }));
      const d = await screen.findByRole('dialog', { name: '批量导入' });
      return {
        user: u,
        dialog: d,
        type: async (text: string) => {
          await u.click(within(d).getByLabelText('JSON'));
          await u.paste(text);
        },
      };
    })();
    await type(DOC);
    await user.click(within(dialog).getByRole('button', { name: '导入' }));
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    (FakeEventSource.instances[0] as FakeEventSource).fail();
    expect(await within(dialog).findByRole('alert')).toHaveTextContent('连接错误，请重试');
  });
});
