import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { type FakeReply, fail, ok } from '../../test/fake-api';
import { envVar, installStarted, installStatus, marketPackage, packageDetails, renderMarket } from './test-fixtures';

const DETAILS = 'GET /api/mcp_market/package_details';
const INSTALL = 'POST /api/mcp_market/install_or_add_service';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const heading = () => screen.findByRole('heading', { level: 1, name: 'acme-echo-mcp' });

describe('package detail view (docs/console.md §2.10)', () => {
  it('shows a spinner while the details load, then every field and the readme as Markdown', async () => {
    const answer = deferred<FakeReply>();
    const { api } = await renderMarket('/market/npm/acme-echo-mcp', { [DETAILS]: () => answer.promise });
    expect(await screen.findByRole('status')).toHaveTextContent('Loading the package details…');
    answer.resolve(
      ok(
        packageDetails(
          {},
          {
            stars: 1234,
            downloads: 5678,
            readme: '# Echo server\n\nSee [the docs](https://example.com/docs) or [this](javascript:alert(1)).',
          },
        ),
      ),
    );
    expect(within(await heading()).getByRole('link')).toHaveAttribute('href', 'https://www.npmjs.com/package/acme-echo-mcp');
    expect(screen.getByText('1.0.0')).toBeInTheDocument();
    const stats = screen.getByTestId('details-stats');
    expect(stats).toHaveTextContent('1,234 stars');
    expect(stats).toHaveTextContent('5,678 downloads a week');
    expect(stats).toHaveTextContent('Acme Tools');
    expect(stats).toHaveTextContent('npm');
    expect(screen.getByText('Echo tools for MCP clients')).toBeInTheDocument();
    const readme = screen.getByTestId('readme');
    expect(within(readme).getByRole('heading', { name: 'Echo server' })).toBeInTheDocument();
    expect(within(readme).getByRole('link', { name: 'the docs' })).toHaveAttribute('href', 'https://example.com/docs');
    expect(within(readme).getByText('this').closest('a')?.getAttribute('href') ?? '').toBe('');
    expect(screen.getByRole('button', { name: 'Install' })).toBeEnabled();
    const [call] = api.callsTo('GET', '/api/mcp_market/package_details');
    expect([call?.url.searchParams.get('package_name'), call?.url.searchParams.get('package_manager')]).toEqual(['acme-echo-mcp', 'npm']);
  });

  it("falls back to 'Unknown Author' and reads an author given as an object", async () => {
    const replies = [
      ok(packageDetails({ author: '', homepage: '' }, { author: '' })),
      ok(packageDetails({ name: 'other' }, { author: { name: 'Grace' } as unknown as string })),
    ];
    const { router } = await renderMarket('/market/npm/acme-echo-mcp', { [DETAILS]: () => replies.shift() as FakeReply });
    await heading();
    expect(screen.getByTestId('details-stats')).toHaveTextContent('Unknown Author');
    await act(() => router.navigate('/market/npm/other'));
    expect(await screen.findByRole('heading', { level: 1, name: 'other' })).toBeInTheDocument();
    expect(screen.getByTestId('details-stats')).toHaveTextContent('Grace');
  });

  it('looks up scoped packages and registry names with their slash', async () => {
    const { api } = await renderMarket('/market/npm/@modelcontextprotocol/server-github', {
      [DETAILS]: () => ok(packageDetails({ name: '@modelcontextprotocol/server-github' })),
    });
    expect(await screen.findByRole('heading', { level: 1, name: '@modelcontextprotocol/server-github' })).toBeInTheDocument();
    expect(api.callsTo('GET', '/api/mcp_market/package_details')[0]?.url.searchParams.get('package_name')).toBe(
      '@modelcontextprotocol/server-github',
    );
  });

  it.each([
    ['the registry does not know the package', '/market/npm/nothing-here', 1],
    ['the source is unknown', '/market/cargo/serde', 0],
    ['no package is selected', '/market/npm/', 0],
  ])('shows the not-found message when %s', async (_case, path, calls) => {
    const { api } = await renderMarket(path, { [DETAILS]: () => fail(404, 'Package nothing-here was not found on npm') });
    const notFound = await screen.findByTestId('details-not-found');
    expect(within(notFound).getByRole('heading', { name: 'Service Not Found' })).toBeInTheDocument();
    expect(notFound).toHaveTextContent('No package is selected, or the registry does not know this one.');
    expect(within(notFound).getByRole('link', { name: 'Back to the market' })).toHaveAttribute('href', expect.stringMatching(/^\/market/));
    expect(api.callsTo('GET', '/api/mcp_market/package_details')).toHaveLength(calls);
  });

  it('shows why the details could not be loaded, with a retry', async () => {
    let failing = true;
    await renderMarket('/market/npm/acme-echo-mcp', {
      [DETAILS]: () => (failing ? fail(502, 'npm could not be reached, please try again later') : ok(packageDetails())),
    });
    expect(await screen.findByRole('alert')).toHaveTextContent('npm could not be reached, please try again later');
    failing = false;
    await userEvent.setup().click(screen.getByRole('button', { name: 'Retry' }));
    expect(await heading()).toBeInTheDocument();
  });

  it('goes back to the list with the same tab and term, without searching again', async () => {
    const { api } = await renderMarket('/market?source=npm&q=echo', { [DETAILS]: () => ok(packageDetails()) });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('link', { name: 'Details of acme-echo-mcp' }));
    await heading();
    await user.click(screen.getByRole('link', { name: 'Back to the market' }));
    expect(await screen.findByRole('group', { name: 'acme-echo-mcp' })).toBeInTheDocument();
    expect(screen.getByRole('searchbox', { name: 'Search packages' })).toHaveValue('echo');
    expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(1);
  });
});

describe('install and uninstall from the detail view (docs/console.md §2.10, §4, §5)', () => {
  it('asks first for a required variable whose default is a placeholder, then installs with it; Finish toasts and reloads', async () => {
    const { api } = await renderMarket('/market/npm/acme-echo-mcp', {
      [DETAILS]: () =>
        ok(packageDetails({}, { env_vars: [envVar({ default_value: '<your-token>' }), envVar({ name: 'LEVEL', optional: true })] })),
      [INSTALL]: () => installStarted(),
      'GET /api/mcp_market/install_status/t1': () => ok(installStatus({ status: 'completed', logs: ['ready'] })),
    });
    const user = userEvent.setup();
    await heading();
    await user.click(screen.getByRole('button', { name: 'Install' }));
    const modal = await screen.findByRole('dialog', { name: 'Environment variables required' });
    expect(within(modal).queryByLabelText('LEVEL')).not.toBeInTheDocument();
    expect(within(modal).getByText('Token from the Acme console')).toBeInTheDocument();
    const field = within(modal).getByLabelText('ACME_ECHO_TOKEN');
    expect(field).toHaveAttribute('type', 'password');
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(0);

    await user.type(field, 's3cret{Enter}');
    const dialog = await screen.findByRole('dialog', { name: 'Installation Complete' });
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')[0]?.body).toMatchObject({
      package_name: 'acme-echo-mcp',
      user_provided_env_vars: { ACME_ECHO_TOKEN: 's3cret' },
    });
    const loads = api.callsTo('GET', '/api/mcp_market/package_details').length;
    await user.click(within(dialog).getByRole('button', { name: 'Finish' }));
    expect(await screen.findByText('Installation Successful')).toBeInTheDocument();
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/package_details').length).toBeGreaterThan(loads));
  });

  it('asks for the URL variables of an MCP Registry remote like environment variables: described, required ones enforced', async () => {
    const name = 'io.github.acme/tenant-remote';
    const { api } = await renderMarket(`/market/mcp_registry/${name}`, {
      [DETAILS]: () =>
        ok(
          packageDetails(
            { name, package_manager: 'mcp_registry' },
            {
              env_vars: [
                envVar({ name: 'tenant', description: 'Your tenant identifier', is_secret: false }),
                envVar({
                  name: 'region',
                  description: 'Deployment region (eu, us)',
                  is_secret: false,
                  optional: true,
                  default_value: 'eu',
                }),
              ],
            },
          ),
        ),
      [INSTALL]: () => installStarted(),
      'GET /api/mcp_market/install_status/t1': () => ok(installStatus({ status: 'completed', logs: ['ready'] })),
    });
    const user = userEvent.setup();
    await screen.findByRole('heading', { level: 1, name });
    await user.click(screen.getByRole('button', { name: 'Install' }));
    const modal = await screen.findByRole('dialog', { name: 'Environment variables required' });
    const tenant = within(modal).getByLabelText('tenant');
    expect(tenant).toHaveAccessibleDescription('Your tenant identifier');
    expect(tenant).toHaveAttribute('type', 'text');
    // The one with a default is not asked for: the server fills it in.
    expect(within(modal).queryByLabelText('region')).not.toBeInTheDocument();

    await user.click(within(modal).getByRole('button', { name: 'Install' }));
    expect(await within(modal).findByRole('alert')).toHaveTextContent('Please enter a value for tenant.');
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(0);

    await user.type(tenant, ' acme co {Enter}');
    expect(await screen.findByRole('dialog', { name: 'Installation Complete' })).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')[0]?.body).toMatchObject({
      package_name: name,
      package_manager: 'mcp_registry',
      user_provided_env_vars: { tenant: 'acme co' },
    });
  });

  it('keeps blocking while the value is a placeholder, and installs at once when nothing required is missing', async () => {
    const replies = [
      ok(packageDetails({}, { env_vars: [envVar()] })),
      ok(
        packageDetails(
          { name: 'ready' },
          { env_vars: [envVar({ default_value: 'https://api.example.com' }), envVar({ name: 'OPT', optional: true })] },
        ),
      ),
    ];
    const { api, router } = await renderMarket('/market/npm/acme-echo-mcp', {
      [DETAILS]: () => replies.shift() as FakeReply,
      [INSTALL]: () => ok({ mcp_service_id: 9, status: 'already_installed_instance_added', service_name: 'ready' }),
    });
    const user = userEvent.setup();
    await heading();
    await user.click(screen.getByRole('button', { name: 'Install' }));
    await user.type(within(await screen.findByRole('dialog')).getByLabelText('ACME_ECHO_TOKEN'), 'paste-token-here{Enter}');
    expect(await screen.findByRole('dialog', { name: 'Environment variables required' })).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')).toHaveLength(0);
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());

    await act(() => router.navigate('/market/npm/ready'));
    await screen.findByRole('heading', { level: 1, name: 'ready' });
    await user.click(screen.getByRole('button', { name: 'Install' }));
    expect(await screen.findByRole('dialog', { name: 'Installation Complete' })).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/install_or_add_service')[0]?.body).toMatchObject({ user_provided_env_vars: {} });
  });

  it('uninstalls after the detail confirmation, then reloads the details', async () => {
    let installed = true;
    const { api } = await renderMarket('/market/npm/acme-echo-mcp', {
      [DETAILS]: () =>
        ok(
          packageDetails(
            {},
            installed ? { is_installed: true, installed_service_id: 12 } : { is_installed: false, installed_service_id: null },
          ),
        ),
      'POST /api/mcp_market/uninstall': () => {
        installed = false;
        return ok(undefined, 'Service uninstalled');
      },
    });
    const user = userEvent.setup();
    await heading();
    await user.click(screen.getByRole('button', { name: 'Uninstall' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Confirm Uninstallation' });
    expect(confirm).toHaveTextContent('Are you sure you want to uninstall acme-echo-mcp?');
    await user.click(within(confirm).getByRole('button', { name: 'Uninstall' }));
    expect(await screen.findByText('Service Uninstalled')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/uninstall')[0]?.body).toEqual({ service_id: 12 });
    expect(await screen.findByRole('button', { name: 'Install' })).toBeEnabled();
    expect(api.callsTo('GET', '/api/mcp_market/package_details').length).toBeGreaterThanOrEqual(2);
  });

  it('shows the install started from the list as running on the detail view too', async () => {
    const answer = deferred<FakeReply>();
    await renderMarket('/market?source=npm&q=echo', {
      'GET /api/mcp_market/search': () => ok([marketPackage()]),
      [DETAILS]: () => ok(packageDetails()),
      [INSTALL]: () => answer.promise,
    });
    const user = userEvent.setup();
    const card = await screen.findByRole('group', { name: 'acme-echo-mcp' });
    await user.click(within(card).getByRole('button', { name: 'Install' }));
    await user.click(within(card).getByRole('link', { name: 'Details of acme-echo-mcp', hidden: true }));
    await heading();
    expect(screen.getByRole('button', { name: 'Installing...' })).toBeDisabled();
    answer.resolve(ok({ mcp_service_id: 3, status: 'already_installed_instance_added', service_name: 'acme-echo-mcp' }));
    expect(await screen.findByRole('dialog', { name: 'Installation Complete' })).toBeInTheDocument();
  });
});
