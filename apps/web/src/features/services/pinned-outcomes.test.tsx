import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { VALIDATION_SUCCESS_PAUSE_MS } from '../../lib/use-submit-phases';
import { fakeApi, ok, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { INSTALL_POLL_INTERVAL_MS } from '../installs';
import { ServicesPage } from './services-page';

type Routes = Parameters<typeof fakeApi>[0];

const advance = (ms: number) => act(() => vi.advanceTimersByTimeAsync(ms));

/** A custom `npx` service pinned by the server (decision 0035). */
const pinned = installedService({
  id: 7,
  name: 'server-memory',
  display_name: 'Memory',
  type: 'stdio',
  source: 'custom',
  package_name: '@modelcontextprotocol/server-memory',
  package_manager: 'npm',
  version: '2026.7.4',
  command: 'node',
  typed_command: 'npx -y @modelcontextprotocol/server-memory',
});

/** One whose package the registry does not know: kept disabled with the reason. */
const failedInstall = installedService({
  id: 8,
  name: 'ghost',
  display_name: 'ghost',
  type: 'stdio',
  enabled: false,
  package_name: 'acme-no-such-package',
  package_manager: 'npm',
  version: '',
  command: '',
  typed_command: 'npx -y acme-no-such-package',
  health_status: 'install_failed',
  health_details: 'package not found on the registry: acme-no-such-package',
});

async function openPage(routes: Routes = {}, language: 'en' | 'zh-CN' = 'en') {
  localStorage.setItem('i18nextLng', language);
  storeSession({ role: 10 });
  const api = fakeApi({ 'GET /api/mcp_market/installed': () => ok([pinned, failedInstall]), ...routes });
  // The menu's closing animation may still hold pointer events off the page when the lazy dialog arrives.
  const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime, pointerEventsCheck: 0 });
  await renderWithProviders(<ServicesPage />);
  return { api, user };
}

const labels = {
  en: { add: /Add Service/, custom: 'Custom Install', name: 'Name', url: 'Server URL', submit: 'Install' },
  'zh-CN': { add: /添加服务/, custom: '自定义安装', name: '名称', url: '服务器地址', submit: '安装' },
};

async function createRemote(user: ReturnType<typeof userEvent.setup>, language: 'en' | 'zh-CN' = 'en') {
  const l = labels[language];
  await user.click(await screen.findByRole('button', { name: l.add }));
  await user.click(await screen.findByRole('menuitem', { name: l.custom }));
  const dialog = await screen.findByRole('dialog', { name: l.custom });
  await user.type(within(dialog).getByLabelText(l.name), 'silent');
  await user.type(within(dialog).getByLabelText(l.url), 'http://127.0.0.1:9/mcp');
  await user.click(within(dialog).getByRole('button', { name: l.submit }));
  await advance(VALIDATION_SUCCESS_PAUSE_MS);
}

const unreachable = () =>
  ok({
    service_id: 9,
    name: 'silent',
    display_name: 'silent',
    status: 'completed',
    health_status: 'unhealthy',
    health_details: 'could not start: upstream request failed: fetch failed',
  });

describe('pinned services and outcomes in true words (issues 14 and 15)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
  });

  it('says a remote that does not answer was created but does not answer yet, as a warning, not "Service Created"', async () => {
    const { user } = await openPage({ 'POST /api/mcp_market/custom_service': unreachable });
    await createRemote(user);
    expect(await screen.findByText('Created, but Not Answering Yet')).toBeInTheDocument();
    expect(
      screen.getByText('silent was created, but it does not answer yet: could not start: upstream request failed: fetch failed'),
    ).toBeInTheDocument();
    expect(screen.queryByText('Service Created')).not.toBeInTheDocument();
    expect(document.querySelector('[data-sonner-toast][data-type="warning"]')).not.toBeNull();
  });

  it('says the same in zh-CN', async () => {
    const { user } = await openPage({ 'POST /api/mcp_market/custom_service': unreachable }, 'zh-CN');
    await createRemote(user, 'zh-CN');
    expect(await screen.findByText('已创建，但暂时没有响应')).toBeInTheDocument();
    expect(screen.getByText('silent 已创建，但暂时没有响应：could not start: upstream request failed: fetch failed')).toBeInTheDocument();
  });

  it('names the cause of a failed install in the toast (the server words it in the user’s language)', async () => {
    const { user } = await openPage({
      'POST /api/mcp_market/custom_service': () =>
        ok({ service_id: 8, name: 'ghost', display_name: 'ghost', status: 'installing', task_id: 'task-8' }),
      'GET /api/mcp_market/install_status/task-8': () =>
        ok({ status: 'failed', error_message: 'package not found on the registry: acme-no-such-package', logs: [] }),
    });
    await user.click(await screen.findByRole('button', { name: /Add Service/ }));
    await user.click(await screen.findByRole('menuitem', { name: 'Custom Install' }));
    const dialog = await screen.findByRole('dialog', { name: 'Custom Install' });
    await user.type(within(dialog).getByLabelText('Name'), 'ghost');
    await user.selectOptions(within(dialog).getByLabelText('Type'), 'stdio');
    await user.type(within(dialog).getByLabelText('Command'), 'npx -y acme-no-such-package');
    await user.click(within(dialog).getByRole('button', { name: 'Install' }));
    await advance(VALIDATION_SUCCESS_PAUSE_MS);
    await advance(INSTALL_POLL_INTERVAL_MS);
    expect(await screen.findByText('Installation Failed')).toBeInTheDocument();
    const toast = document.querySelector('[data-sonner-toast][data-type="error"]') as HTMLElement;
    expect(within(toast).getByText('package not found on the registry: acme-no-such-package')).toBeInTheDocument();
  });

  it('shows the typed command and the pinned version, offers Remove for a failed install, and Update moves to the new version', async () => {
    let version = '2026.7.4';
    const answers = ['installing', 'completed'];
    const { user, api } = await openPage({
      'GET /api/mcp_market/installed': () => ok([{ ...pinned, version }, failedInstall]),
      'POST /api/mcp_services/7/update_package': () =>
        ok({ service_id: 7, name: 'server-memory', task_id: 'up-7', from_version: '2026.7.4' }),
      'GET /api/mcp_market/install_status/up-7': () => {
        const status = answers.shift() ?? 'completed';
        if (status === 'completed') version = '2026.8.31';
        return ok({ status, logs: [], ...(status === 'completed' ? { version: '2026.8.31' } : {}) });
      },
    });
    const card = (await screen.findByRole('group', { name: 'Memory' })) as HTMLElement;
    expect(within(card).getByText('npx -y @modelcontextprotocol/server-memory')).toBeInTheDocument();
    expect(within(card).getByTestId('pinned-version')).toHaveTextContent('Pinned 2026.7.4');

    const ghost = screen.getByRole('group', { name: 'ghost' });
    expect(within(ghost).getByText('package not found on the registry: acme-no-such-package', { exact: false })).toBeInTheDocument();
    expect(within(ghost).getByRole('button', { name: 'Remove' })).toBeInTheDocument();
    expect(within(ghost).queryByRole('button', { name: /Update/ })).not.toBeInTheDocument();

    await user.click(within(card).getByRole('button', { name: 'Update Memory to the latest version' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_services/7/update_package')).toHaveLength(1));
    await advance(2_000);
    await advance(2_000);
    expect(await screen.findByText('Update Successful')).toBeInTheDocument();
    expect(screen.getByText('Memory now runs version 2026.8.31.')).toBeInTheDocument();
    await waitFor(() => expect(within(card).getByTestId('pinned-version')).toHaveTextContent('Pinned 2026.8.31'));
  });

  it('Update on the latest version says so instead of "now runs"', async () => {
    const answers = ['installing', 'completed'];
    const { user, api } = await openPage({
      'GET /api/mcp_market/installed': () => ok([pinned]),
      'POST /api/mcp_services/7/update_package': () =>
        ok({ service_id: 7, name: 'server-memory', task_id: 'up-8', from_version: '2026.7.4' }),
      'GET /api/mcp_market/install_status/up-8': () => {
        const status = answers.shift() ?? 'completed';
        return ok({
          status,
          logs: [],
          ...(status === 'completed'
            ? { version: '2026.7.4', already_latest: true, message: 'server-memory already runs the latest version (2026.7.4)' }
            : {}),
        });
      },
    });
    const card = (await screen.findByRole('group', { name: 'Memory' })) as HTMLElement;
    await user.click(within(card).getByRole('button', { name: 'Update Memory to the latest version' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_services/7/update_package')).toHaveLength(1));
    await advance(2_000);
    await advance(2_000);
    expect(await screen.findByText('Already the latest')).toBeInTheDocument();
    expect(screen.getByText('Memory already runs the latest version (2026.7.4): nothing was reinstalled.')).toBeInTheDocument();
    expect(screen.queryByText(/now runs version/)).not.toBeInTheDocument();
  });
});
