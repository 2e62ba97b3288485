import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { DIALOG_RESET_DELAY_MS, VALIDATION_SUCCESS_PAUSE_MS } from '../../lib/use-submit-phases';
import { type FakeReply, fail, fakeApi, ok, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { INSTALL_POLL_INTERVAL_MS, INSTALL_POLL_MAX_ATTEMPTS } from '../installs';
import { ServicesPage } from './services-page';

type Routes = Parameters<typeof fakeApi>[0];

const advance = (ms: number) => act(() => vi.advanceTimersByTimeAsync(ms));

async function openCustomInstall(routes: Routes = {}) {
  storeSession({ role: 10 });
  const api = fakeApi({ 'GET /api/mcp_market/installed': () => ok([installedService()]), ...routes });
  const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
  await renderWithProviders(<ServicesPage />);
  const open = async () => {
    await user.click(await screen.findByRole('button', { name: /Add Service/ }));
    await user.click(await screen.findByRole('menuitem', { name: 'Custom Install' }));
    return screen.findByRole('dialog', { name: 'Custom Install' });
  };
  return { api, user, open, dialog: await open() };
}

const submit = (user: ReturnType<typeof userEvent.setup>, dialog: HTMLElement) =>
  user.click(within(dialog).getByRole('button', { name: 'Install' }));

/** Fills the dialog as an admin would: a stdio command and its variables. */
async function fillStdio(
  user: ReturnType<typeof userEvent.setup>,
  dialog: HTMLElement,
  command = 'npx -y @modelcontextprotocol/server-everything',
) {
  await user.type(within(dialog).getByLabelText('Name'), 'everything');
  await user.selectOptions(within(dialog).getByLabelText('Type'), 'stdio');
  await user.type(within(dialog).getByLabelText('Command'), command);
}

function deferred() {
  let resolve!: (reply: FakeReply) => void;
  const promise = new Promise<FakeReply>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('custom install dialog (docs/console.md §2.7, §5)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
  });

  it('starts on streamable HTTP with URL and headers fields', async () => {
    const { dialog } = await openCustomInstall();
    expect(within(dialog).getByLabelText('Type')).toHaveValue('streamableHttp');
    expect(within(dialog).getByLabelText('Server URL')).toBeInTheDocument();
    expect(within(dialog).getByLabelText('Request headers')).toBeInTheDocument();
    expect(within(dialog).queryByLabelText('Command')).not.toBeInTheDocument();
  });

  it('shows the field errors, and editing a field clears its error', async () => {
    const { dialog, user, api } = await openCustomInstall();
    await submit(user, dialog);
    const name = within(dialog).getByLabelText('Name');
    expect(await within(dialog).findByText('Please enter a service name', { selector: '[role=alert]' })).toBeInTheDocument();
    expect(name).toHaveAttribute('aria-invalid', 'true');
    expect(within(dialog).getByText('URL cannot be empty')).toBeInTheDocument();

    await user.type(within(dialog).getByLabelText('Server URL'), 'not a url');
    expect(within(dialog).queryByText('URL cannot be empty')).not.toBeInTheDocument();
    // The name's error stays until the name is edited.
    expect(within(dialog).getByText('Please enter a service name', { selector: '[role=alert]' })).toBeInTheDocument();
    await user.type(name, 'remote');
    expect(within(dialog).queryByText('Please enter a service name', { selector: '[role=alert]' })).not.toBeInTheDocument();

    await submit(user, dialog);
    expect(await within(dialog).findByText('Please enter a valid URL')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')).toHaveLength(0);
  });

  it.each([
    ['', 'Please enter a command'],
    ['node server.js', 'The command must start with npx or uvx, or be the absolute path of an executable'],
    ['npx -y', 'Parse command failed: no package name found'],
    ['uvx "unclosed', 'Parse command failed: no package name found'],
  ])('checks the stdio command %j', async (command, message) => {
    const { dialog, user, api } = await openCustomInstall();
    await user.type(within(dialog).getByLabelText('Name'), 'x');
    await user.selectOptions(within(dialog).getByLabelText('Type'), 'stdio');
    if (command) await user.type(within(dialog).getByLabelText('Command'), command);
    await submit(user, dialog);
    expect(await within(dialog).findByText(message)).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')).toHaveLength(0);
  });

  it('goes through validating, validation success (0.8 s) and submitting, and cannot be closed meanwhile', async () => {
    const reply = deferred();
    const { dialog, user, api } = await openCustomInstall({ 'POST /api/mcp_market/custom_service': () => reply.promise });
    await user.type(within(dialog).getByLabelText('Name'), 'remote');
    await user.type(within(dialog).getByLabelText('Server URL'), 'https://mcp.example.com/mcp');
    await user.type(within(dialog).getByLabelText('Request headers'), 'X-Api-Key=abc=def{enter}broken line{enter}EMPTY=');
    await submit(user, dialog);

    expect(await within(dialog).findByRole('status')).toHaveTextContent('Validation passed');
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')).toHaveLength(0);
    await user.keyboard('{Escape}');
    expect(screen.getByRole('dialog', { name: 'Custom Install' })).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toBeDisabled();
    expect(within(dialog).queryByRole('button', { name: 'Close' })).not.toBeInTheDocument();

    await advance(VALIDATION_SUCCESS_PAUSE_MS);
    expect(within(dialog).getByRole('status')).toHaveTextContent('Submitting…');
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_market/custom_service')).toHaveLength(1));
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')[0]?.body).toEqual({
      name: 'remote',
      type: 'streamableHttp',
      url: 'https://mcp.example.com/mcp',
      headers: { 'X-Api-Key': 'abc=def' },
    });
    await user.keyboard('{Escape}');
    expect(screen.getByRole('dialog', { name: 'Custom Install' })).toBeInTheDocument();

    reply.resolve(ok({ service_id: 5, name: 'remote', display_name: 'remote', status: 'completed' }, 'created'));
    expect(await screen.findByText('Service Created')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Custom Install' })).not.toBeInTheDocument());
  });

  it('returns to idle after a failed submission and shows the server message', async () => {
    const { dialog, user } = await openCustomInstall({
      'POST /api/mcp_market/custom_service': () => fail(409, 'A service named "remote" already exists'),
    });
    await user.type(within(dialog).getByLabelText('Name'), 'remote');
    await user.type(within(dialog).getByLabelText('Server URL'), 'https://mcp.example.com/mcp');
    await submit(user, dialog);
    await advance(VALIDATION_SUCCESS_PAUSE_MS);
    expect(await screen.findByText('A service named "remote" already exists')).toBeInTheDocument();
    expect(screen.getByText('Failed to create the service')).toBeInTheDocument();
    await waitFor(() => expect(within(dialog).queryByRole('status')).not.toBeInTheDocument());
    expect(within(dialog).getByRole('button', { name: 'Install' })).toBeEnabled();
    expect(within(dialog).getByLabelText('Name')).toHaveValue('remote');
  });

  it('shows a refusal beside the field the server names, in the dialog, and keeps what was typed', async () => {
    const { dialog, user } = await openCustomInstall({
      'POST /api/mcp_market/custom_service': () => ({
        status: 400,
        body: { success: false, message: '/no/such/bin does not exist or is not an executable file', field: 'command' },
      }),
    });
    await fillStdio(user, dialog, '/no/such/bin --flag');
    await submit(user, dialog);
    await advance(VALIDATION_SUCCESS_PAUSE_MS);
    const command = within(dialog).getByLabelText('Command');
    await waitFor(() => expect(command).toHaveAttribute('aria-invalid', 'true'));
    expect(command).toHaveAccessibleDescription(/\/no\/such\/bin does not exist or is not an executable file/);
    // The focus goes to the field to correct once the dialog is no longer busy.
    await waitFor(() => expect(command).toHaveFocus());
    expect(command).toHaveValue('/no/such/bin --flag');
    expect(within(dialog).getByLabelText('Name')).toHaveValue('everything');
    // Said in the dialog, not in a passing toast.
    expect(screen.queryByText('Failed to create the service')).not.toBeInTheDocument();
    await user.type(command, ' x');
    expect(command).not.toHaveAttribute('aria-invalid');
  });

  it('prefills the first required variable as NAME= when the server asks for it', async () => {
    const { dialog, user } = await openCustomInstall({
      'POST /api/mcp_market/custom_service': () => ({
        status: 400,
        body: { success: false, message: 'Missing variables', data: { required_env_vars: ['API_KEY', 'OTHER'] } },
      }),
    });
    await fillStdio(user, dialog);
    await submit(user, dialog);
    await advance(VALIDATION_SUCCESS_PAUSE_MS);
    await waitFor(() => expect(within(dialog).getByLabelText('Environment variables')).toHaveValue('API_KEY='));
    expect(screen.getByText('Missing variables')).toBeInTheDocument();
  });

  it('is empty again when reopened after the reset delay', async () => {
    const { dialog, user, open } = await openCustomInstall();
    await user.type(within(dialog).getByLabelText('Name'), 'draft');
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await advance(DIALOG_RESET_DELAY_MS);
    const again = await open();
    expect(within(again).getByLabelText('Name')).toHaveValue('');
  });

  it('offers isolation for stdio with the per-user cap beside it, and sends a process per session when chosen', async () => {
    const { dialog, user, api } = await openCustomInstall({
      'POST /api/mcp_market/custom_service': () =>
        ok({ service_id: 7, name: 'everything', display_name: 'everything', status: 'installing', task_id: 'task-7' }, 'started'),
      'GET /api/mcp_market/install_status/task-7': () =>
        ok({ task_id: 'task-7', kind: 'custom', status: 'installing', logs: [], error_message: '' }),
    });
    // Remote types share one connection: no choice there.
    expect(within(dialog).queryByLabelText('Isolation')).not.toBeInTheDocument();
    await fillStdio(user, dialog);
    const isolation = within(dialog).getByLabelText('Isolation');
    expect(isolation).toHaveValue('shared');
    expect(isolation).toHaveAccessibleDescription(/each user may run at most 10 such processes per service/);
    await user.selectOptions(isolation, 'One process per client session');
    await submit(user, dialog);
    await advance(VALIDATION_SUCCESS_PAUSE_MS);
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_market/custom_service')).toHaveLength(1));
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')[0]?.body).toEqual({
      name: 'everything',
      type: 'stdio',
      command: 'npx -y @modelcontextprotocol/server-everything',
      environments: {},
      isolation: 'session',
    });
  });
});

describe('stdio custom install polling (docs/console.md §4)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
  });

  async function installStdio(statuses: () => FakeReply) {
    const ctx = await openCustomInstall({
      'POST /api/mcp_market/custom_service': () =>
        ok({ service_id: 6, name: 'everything', display_name: 'everything', status: 'installing', task_id: 'task-1' }, 'started'),
      'GET /api/mcp_market/install_status/task-1': statuses,
    });
    await fillStdio(ctx.user, ctx.dialog, 'npx -y @modelcontextprotocol/server-everything');
    await ctx.user.type(within(ctx.dialog).getByLabelText('Environment variables'), 'A=1{enter}nothing{enter}B=x=y');
    await submit(ctx.user, ctx.dialog);
    await advance(VALIDATION_SUCCESS_PAUSE_MS);
    expect(await screen.findByText('Installation Submitted')).toBeInTheDocument();
    expect(ctx.api.callsTo('POST', '/api/mcp_market/custom_service')[0]?.body).toEqual({
      name: 'everything',
      type: 'stdio',
      command: 'npx -y @modelcontextprotocol/server-everything',
      environments: { A: '1', B: 'x=y' },
    });
    const polls = () => ctx.api.callsTo('GET', '/api/mcp_market/install_status/task-1').length;
    return { ...ctx, polls };
  }

  it('polls every 10 s until completed, then says so and refreshes the list', async () => {
    const answers = ['pending', 'installing', 'completed'];
    const { polls, api } = await installStdio(() => ok({ status: answers.shift(), logs: [] }));
    expect(polls()).toBe(0);
    const listLoads = api.callsTo('GET', '/api/mcp_market/installed').length;
    await advance(INSTALL_POLL_INTERVAL_MS);
    expect(polls()).toBe(1);
    await advance(INSTALL_POLL_INTERVAL_MS * 2);
    expect(polls()).toBe(3);
    expect(await screen.findByText('Installation Successful')).toBeInTheDocument();
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/installed').length).toBeGreaterThan(listLoads));
    await advance(INSTALL_POLL_INTERVAL_MS * 3);
    expect(polls()).toBe(3);
  });

  it('shows the reason when the install failed', async () => {
    await installStdio(() => ok({ status: 'failed', error_message: 'Health check failed: exited with code 1' }));
    await advance(INSTALL_POLL_INTERVAL_MS);
    expect(await screen.findByText('Installation Failed')).toBeInTheDocument();
    expect(screen.getByText('Health check failed: exited with code 1')).toBeInTheDocument();
  });

  it('gives up with a timeout toast after 30 tries', async () => {
    const { polls } = await installStdio(() => ok({ status: 'installing' }));
    await advance(INSTALL_POLL_INTERVAL_MS * INSTALL_POLL_MAX_ATTEMPTS);
    expect(polls()).toBe(30);
    expect(await screen.findByText('Installation Timed Out')).toBeInTheDocument();
    await advance(INSTALL_POLL_INTERVAL_MS * 5);
    expect(polls()).toBe(30);
  });

  it('ends with a status-check failure when every poll fails', async () => {
    const { polls } = await installStdio(() => fail(400, 'task store unavailable'));
    await advance(INSTALL_POLL_INTERVAL_MS * INSTALL_POLL_MAX_ATTEMPTS);
    expect(polls()).toBe(30);
    expect(await screen.findByText('Status Check Failed')).toBeInTheDocument();
    expect(screen.getByText('task store unavailable')).toBeInTheDocument();
  });
});
