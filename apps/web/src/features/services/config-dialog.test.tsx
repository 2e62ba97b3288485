import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { CopyButton } from './copy-button';
import { ServicesPage } from './services-page';
import { COPY_FEEDBACK_MS, useCopy } from './use-copy';

const KEY = 'tp_0123456789abcdefghijklmnopqrstuv';

async function openConfig(
  service = installedService({ name: 'everything', display_name: 'Everything' }),
  { role = 1, token = KEY, routes = {} } = {},
) {
  storeSession({ role });
  const api = fakeApi({
    'GET /api/mcp_market/installed': () => ok([service]),
    'GET /api/user/self': () => ok(selfUser({ role, token })),
    ...routes,
  });
  const user = userEvent.setup();
  await renderWithProviders(<ServicesPage />);
  await user.click(await screen.findByRole('button', { name: 'Configure' }));
  const dialog = await screen.findByRole('dialog');
  return { api, user, dialog };
}

const urlField = (dialog: HTMLElement) => within(dialog).getByLabelText('Endpoint URL');

describe('configuration dialog (docs/console.md §2.6)', () => {
  it('is titled with the display name, else the name', async () => {
    const { dialog } = await openConfig(installedService({ name: 'plain', display_name: '' }));
    expect(within(dialog).getByRole('heading', { name: 'plain' })).toBeInTheDocument();
  });

  it('defaults to streamable HTTP: the /mcp URL and an HTTP config with the bearer header', async () => {
    const { dialog } = await openConfig();
    expect(within(dialog).getByRole('radio', { name: 'Streamable HTTP' })).toBeChecked();
    await waitFor(() => expect(within(dialog).getByTestId('config-json')).toHaveTextContent('Bearer'));
    expect(urlField(dialog)).toHaveValue('http://localhost:3000/proxy/everything/mcp');
    expect(within(dialog).getByText('HTTP configuration')).toBeInTheDocument();
    expect(JSON.parse(within(dialog).getByTestId('config-json').textContent ?? '')).toEqual({
      mcpServers: {
        everything: {
          type: 'streamableHttp',
          url: 'http://localhost:3000/proxy/everything/mcp',
          headers: { Authorization: `Bearer ${KEY}` },
        },
      },
    });
    expect(within(dialog).queryByLabelText('Request header')).not.toBeInTheDocument();
  });

  it('shows the OpenAPI face: its URL, the document, and an Open WebUI connection with the key as Bearer', async () => {
    const { dialog } = await openConfig();
    expect(within(dialog).getByLabelText('OpenAPI URL')).toHaveValue('http://localhost:3000/openapi/proxy/everything');
    expect(within(dialog).getByLabelText('OpenAPI document')).toHaveValue('http://localhost:3000/openapi/proxy/everything/openapi.json');
    await waitFor(() => expect(within(dialog).getByTestId('snippet-openwebui')).toHaveTextContent('bearer'));
    expect(JSON.parse(within(dialog).getByTestId('snippet-openwebui').textContent ?? '')).toEqual([
      {
        type: 'openapi',
        url: 'http://localhost:3000/openapi/proxy/everything',
        path: 'openapi.json',
        auth_type: 'bearer',
        key: KEY,
        config: { enable: true },
      },
    ]);
  });

  it('says what the OpenAPI face is in Chinese', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    storeSession({ role: 1 });
    fakeApi({
      'GET /api/mcp_market/installed': () => ok([installedService({ name: 'everything', display_name: 'Everything' })]),
      'GET /api/user/self': () => ok(selfUser({ role: 1, token: KEY })),
    });
    const user = userEvent.setup();
    await renderWithProviders(<ServicesPage />);
    await user.click(await screen.findByRole('button', { name: '配置' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByRole('heading', { name: 'OpenAPI 工具服务器' })).toBeInTheDocument();
    expect(within(dialog).getByLabelText('OpenAPI 地址')).toHaveValue('http://localhost:3000/openapi/proxy/everything');
    expect(within(dialog).getByText(/TOOL_SERVER_CONNECTIONS/)).toBeInTheDocument();
  });

  it('for SSE shows the /sse URL, the header line and an SSE config', async () => {
    const { dialog, user } = await openConfig();
    await waitFor(() => expect(within(dialog).getByTestId('config-json')).toHaveTextContent('Bearer'));
    await user.click(within(dialog).getByRole('radio', { name: 'SSE' }));
    expect(urlField(dialog)).toHaveValue('http://localhost:3000/proxy/everything/sse');
    expect(within(dialog).getByLabelText('Request header')).toHaveValue(`Authorization=Bearer ${KEY}`);
    expect(within(dialog).getByText('SSE configuration')).toBeInTheDocument();
    expect(JSON.parse(within(dialog).getByTestId('config-json').textContent ?? '').mcpServers.everything).toMatchObject({
      type: 'sse',
      headers: { Authorization: `Bearer ${KEY}` },
    });
  });

  it('without an API key shows no header line and no Authorization in the JSON', async () => {
    const { dialog, user } = await openConfig(undefined, { token: '' });
    expect(await within(dialog).findByText(/API key is not available/)).toBeInTheDocument();
    await user.click(within(dialog).getByRole('radio', { name: 'SSE' }));
    expect(within(dialog).queryByLabelText('Request header')).not.toBeInTheDocument();
    expect(within(dialog).getByTestId('config-json')).not.toHaveTextContent('Authorization');
  });

  it('uses the server address from /api/status for the URL', async () => {
    const { dialog } = await openConfig(undefined, {
      routes: { 'GET /api/status': () => ok({ server_address: 'https://gw.example.com/', start_time: 0 }) },
    });
    await waitFor(() => expect(urlField(dialog)).toHaveValue('https://gw.example.com/proxy/everything/mcp'));
  });

  it('copies the URL, the header and the JSON with their toasts', async () => {
    const { dialog, user } = await openConfig();
    await waitFor(() => expect(within(dialog).getByTestId('config-json')).toHaveTextContent('Bearer'));
    await user.click(within(dialog).getByRole('button', { name: 'Copy: endpoint URL' }));
    expect(await navigator.clipboard.readText()).toBe('http://localhost:3000/proxy/everything/mcp');
    expect(await screen.findByText('Endpoint URL copied')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Copied: endpoint URL' })).toBeInTheDocument();

    await user.click(within(dialog).getByRole('button', { name: 'Copy JSON' }));
    expect(JSON.parse(await navigator.clipboard.readText()).mcpServers.everything.url).toBe('http://localhost:3000/proxy/everything/mcp');
    expect(await screen.findByText('JSON configuration copied')).toBeInTheDocument();

    await user.click(within(dialog).getByRole('radio', { name: 'SSE' }));
    await user.click(within(dialog).getByRole('button', { name: 'Copy: request header' }));
    expect(await navigator.clipboard.readText()).toBe(`Authorization=Bearer ${KEY}`);
    expect(await screen.findByText('Header copied')).toBeInTheDocument();
  });

  it('offers copyable snippets for the common clients', async () => {
    const { dialog, user } = await openConfig();
    await waitFor(() => expect(within(dialog).getByTestId('config-json')).toHaveTextContent('Bearer'));
    const desktop = within(dialog).getByTestId('snippet-claudeDesktop');
    expect(desktop).toHaveTextContent('mcp-remote');
    expect(desktop).toHaveTextContent('"AUTH_HEADER": "Bearer');
    expect(desktop).toHaveTextContent('--allow-http');
    expect(desktop.textContent).not.toContain('?key=');
    await user.click(within(dialog).getByRole('tab', { name: 'Windsurf' }));
    expect(within(dialog).getByTestId('snippet-windsurf')).toHaveTextContent('"serverUrl": "http://localhost:3000/proxy/everything/mcp"');
    await user.click(within(dialog).getByRole('tab', { name: 'Claude Code' }));
    const command = within(dialog).getByTestId('snippet-claudeCode').textContent;
    expect(command).toBe(
      `claude mcp add --transport http everything http://localhost:3000/proxy/everything/mcp --header "Authorization: Bearer ${KEY}"`,
    );
    await user.click(within(dialog).getByRole('button', { name: 'Copy: Claude Code configuration' }));
    expect(await navigator.clipboard.readText()).toBe(command);
    for (const client of ['Cursor', 'VS Code', 'Cherry Studio']) {
      expect(within(dialog).getByRole('tab', { name: client })).toBeInTheDocument();
    }
  });

  it('notes when the clipboard API is unavailable, and reports a copy that cannot be done', async () => {
    const { user } = await openConfig();
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: undefined });
    Object.defineProperty(document, 'execCommand', { configurable: true, value: () => false });
    // The note is read when the dialog renders: reopen it.
    await user.keyboard('{Escape}');
    await user.click(screen.getByRole('button', { name: 'Configure' }));
    expect(await screen.findByText(/does not allow direct clipboard access/)).toBeInTheDocument();
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Copy: endpoint URL' }));
    expect(await screen.findByText('Copy failed')).toBeInTheDocument();
    expect(screen.getByText('The browser refused to copy (execCommand failed).')).toBeInTheDocument();
  });
});

/** One copy button wired to the copy hook, as the dialog wires each of its buttons. */
function Harness() {
  const { copy, copiedId } = useCopy();
  return <CopyButton copied={copiedId === 'x'} label="thing" onCopy={() => void copy('x', 'text', 'copy.urlCopied')} />;
}

describe('copy feedback', () => {
  afterEach(() => vi.useRealTimers());

  it("reads 'Copied' for 1.2 s", async () => {
    fakeApi();
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } });
    await renderWithProviders(<Harness />);
    vi.useFakeTimers();
    fireEvent.click(screen.getByRole('button', { name: 'Copy: thing' }));
    await act(async () => {});
    expect(writeText).toHaveBeenCalledWith('text');
    expect(screen.getByRole('button', { name: 'Copied: thing' })).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(COPY_FEEDBACK_MS - 1));
    expect(screen.getByRole('button', { name: 'Copied: thing' })).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(1));
    expect(screen.getByRole('button', { name: 'Copy: thing' })).toBeInTheDocument();
    expect(COPY_FEEDBACK_MS).toBe(1_200);
  });
});

describe('requests-per-day limit (docs/console.md §2.6, §5)', () => {
  const limited = installedService({ id: 4, name: 'lim', display_name: 'Limited', rpd_limit: 0, user_daily_request_count: 3 });

  it('lets admins set a limit: toast with the limit, usage bar and remaining recomputed locally', async () => {
    const { dialog, user, api } = await openConfig(limited, {
      role: 10,
      routes: { 'PUT /api/mcp_services/4': () => ok(undefined, 'Daily request limit set') },
    });
    const field = within(dialog).getByLabelText('Daily request limit per user');
    expect(field).toHaveValue(0);
    expect(field).toHaveAttribute('min', '0');
    await user.clear(field);
    await user.type(field, '5');
    await user.click(within(dialog).getByRole('button', { name: 'Update limit' }));
    expect(await screen.findByText('Daily limit set to 5 requests.')).toBeInTheDocument();
    expect(api.callsTo('PUT', '/api/mcp_services/4')[0]?.body).toEqual({ rpd_limit: 5 });
    expect(within(dialog).getByTestId('usage-count')).toHaveTextContent('3 / 5');
    expect(within(dialog).getByText('2 requests remaining')).toBeInTheDocument();
    const card = screen.getByRole('group', { name: 'Limited', hidden: true });
    expect(within(card).getByText('2 requests remaining')).toBeInTheDocument();
  });

  it('sends 0 for anything not a number and says the limit is removed', async () => {
    const service = { ...limited, rpd_limit: 10, remaining_requests: 7 };
    const { dialog, user, api } = await openConfig(service, { role: 10, routes: { 'PUT /api/mcp_services/4': () => ok() } });
    const field = within(dialog).getByLabelText('Daily request limit per user');
    expect(field).toHaveValue(10);
    await user.clear(field);
    await user.click(within(dialog).getByRole('button', { name: 'Update limit' }));
    expect(await screen.findByText('Daily limit removed: requests are unlimited.')).toBeInTheDocument();
    expect(api.callsTo('PUT', '/api/mcp_services/4')[0]?.body).toEqual({ rpd_limit: 0 });
    expect(within(dialog).queryByTestId('usage-bar')).not.toBeInTheDocument();
  });

  it('shows the translated updateFailed message when the server refuses', async () => {
    const { dialog, user } = await openConfig(limited, { role: 10, routes: { 'PUT /api/mcp_services/4': () => fail(400, 'nope') } });
    await user.type(within(dialog).getByLabelText('Daily request limit per user'), '9');
    await user.click(within(dialog).getByRole('button', { name: 'Update limit' }));
    expect(await screen.findByText('Update Failed')).toBeInTheDocument();
    expect(screen.getByText('Failed to update the daily limit.')).toBeInTheDocument();
  });

  it('is read-only for users', async () => {
    const { dialog } = await openConfig({ ...limited, rpd_limit: 20 });
    expect(within(dialog).queryByLabelText('Daily request limit per user')).not.toBeInTheDocument();
    expect(within(dialog).getByText(/Current limit: 20/)).toBeInTheDocument();
    expect(within(dialog).getByText(/Only administrators can change the limit/)).toBeInTheDocument();
  });
});
