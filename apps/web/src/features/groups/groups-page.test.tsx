import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { Group } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { GroupsPage } from './groups-page';

const KEY = 'tp_0123456789abcdefghijklmnopqrstuv';

const group = (overrides: Partial<Group> = {}): Group => ({
  id: 3,
  name: 'dev',
  display_name: 'Dev tools',
  description: '',
  mode: 'all',
  separator: '__',
  members: [{ service_id: 1 }, { service_id: 2, tools: ['read_graph'] }],
  access: { restricted: false, user_ids: [] },
  created_at: 0,
  updated_at: 0,
  ...overrides,
});

const services = [
  installedService({ id: 1, name: 'everything', display_name: 'Everything' }),
  installedService({ id: 2, name: 'memory', display_name: 'Memory' }),
];

const tools = (names: string[]) =>
  ok({
    tools: names.map((name) => ({
      name,
      original_name: name,
      enabled: true,
      description: '',
      original_description: '',
      alias: null,
      input_schema: {},
    })),
    dormant: [],
  });

/** A group row's members as the page words them. */
const memberTexts = (row: HTMLElement) =>
  within(row)
    .getAllByRole('listitem')
    .map((m) => m.textContent);

async function renderPage(role: number, routes = {}, groups: Group[] = [group()]) {
  storeSession({ role });
  const api = fakeApi({
    'GET /api/groups': () => ok(groups),
    'GET /api/mcp_market/installed': () => ok(services),
    'GET /api/user/self': () => ok(selfUser({ role, token: KEY })),
    'GET /api/mcp_services/1/tools': () => tools(['echo', 'add', 'longRunningOperation']),
    'GET /api/mcp_services/2/tools': () => tools(['create_entities', 'read_graph']),
    'GET /api/user/': () => ok([selfUser({ id: 5, username: 'bob', display_name: 'Bob' })]),
    ...routes,
  });
  const user = userEvent.setup();
  const rendered = await renderWithProviders(<GroupsPage />, { path: '/groups' });
  return { api, user, ...rendered };
}

describe('groups page (docs/console.md §2.9b)', () => {
  it('lists groups with their services, tools and endpoint; users get no management buttons', async () => {
    await renderPage(1);
    const row = await screen.findByTestId('group-row');
    expect(within(row).getByText('Dev tools')).toBeInTheDocument();
    expect(within(row).getByText('/group/dev/mcp')).toBeInTheDocument();
    // Members are named once the services list has come.
    await waitFor(() => expect(memberTexts(row)).toEqual(['Everything (all tools)', 'Memory (1 tool)']));
    expect(within(row).getByRole('button', { name: 'Configure' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'New group' })).not.toBeInTheDocument();
    expect(within(row).queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    // The server leaves out the members a user may not use (decision 0040); the page says so.
    expect(
      screen.getByText(
        'Groups open to you: one endpoint for several services. Only the services you may use are listed, and only their tools reach you.',
      ),
    ).toBeInTheDocument();
  });

  it('shows a placeholder for a member’s name until the services list has come, never its id; the id only when the list lacks it', async () => {
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    await renderPage(1, {
      'GET /api/mcp_market/installed': async () => {
        await held;
        return ok([services[0]]);
      },
    });
    const row = await screen.findByTestId('group-row');
    expect(within(row).getAllByTestId('member-name-loading')).toHaveLength(2);
    expect(within(row).queryByText(/#\d/)).not.toBeInTheDocument();
    answer();
    await waitFor(() => expect(memberTexts(row)).toEqual(['Everything (all tools)', '#2 (1 tool)']));
    expect(within(row).queryByTestId('member-name-loading')).not.toBeInTheDocument();
  });

  it('configures a group with its /group URLs and the client snippets, with the caller’s own key', async () => {
    const { user } = await renderPage(1);
    await user.click(await screen.findByRole('button', { name: 'Configure' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByLabelText('Endpoint URL')).toHaveValue('http://localhost:3000/group/dev/mcp');
    await user.click(within(dialog).getByRole('radio', { name: 'SSE' }));
    expect(within(dialog).getByLabelText('Endpoint URL')).toHaveValue('http://localhost:3000/group/dev/sse');
    // mcp-remote gets the key in a header through an environment variable, never in the URL.
    // The key comes with the caller's profile.
    await waitFor(() => expect(within(dialog).getByTestId('snippet-claudeDesktop')).toHaveTextContent('"AUTH_HEADER": "Bearer '));
    const claude = within(dialog).getByTestId('snippet-claudeDesktop').textContent ?? '';
    expect(claude).toContain('http://localhost:3000/group/dev/sse');
    expect(claude).not.toContain('?key=');
    // The group's OpenAPI face, beside the MCP snippets.
    expect(within(dialog).getByLabelText('OpenAPI URL')).toHaveValue('http://localhost:3000/openapi/group/dev');
    expect(JSON.parse(within(dialog).getByTestId('snippet-openwebui').textContent ?? '')[0]).toMatchObject({
      url: 'http://localhost:3000/openapi/group/dev',
      path: 'openapi.json',
      auth_type: 'bearer',
    });
  });

  it('creates a group of two services with a subset of tools and restricted access', async () => {
    let body: unknown;
    const { user } = await renderPage(
      10,
      {
        'POST /api/groups': (req: { body: unknown }) => {
          body = req.body;
          return { status: 201, body: { success: true, data: group() } };
        },
      },
      [],
    );
    expect(await screen.findByText('No groups yet.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'New group' }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'dev');
    await user.click(await within(dialog).findByRole('checkbox', { name: 'Everything' }));
    await user.click(within(dialog).getByRole('checkbox', { name: 'Memory' }));
    const wholes = within(dialog).getAllByRole('checkbox', { name: 'All tools, including tools it gains later' });
    // "All tools" can be unticked once the service's tools are listed.
    await waitFor(() => expect(wholes[0]).toBeEnabled());
    await user.click(wholes[0] as HTMLElement);
    // Unchecking "all" starts from every listed tool; the admin removes the ones not wanted.
    await user.click(await within(dialog).findByRole('checkbox', { name: 'add' }));
    await user.click(within(dialog).getByRole('checkbox', { name: 'longRunningOperation' }));
    // Each member keeps its own list inside the group: the form says so where access is chosen.
    expect(
      within(dialog).getByText(
        'Each service keeps its own access list inside the group: a user it is not open to neither sees nor calls its tools here.',
      ),
    ).toBeInTheDocument();
    await user.click(within(dialog).getByRole('checkbox', { name: 'Only chosen users (admins always may)' }));
    await user.click(await within(dialog).findByRole('checkbox', { name: /Bob/ }));
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(body).toEqual({
      name: 'dev',
      display_name: '',
      description: '',
      mode: 'all',
      separator: '__',
      members: [{ service_id: 1, tools: ['echo'] }, { service_id: 2 }],
      access: { restricted: true, user_ids: [5] },
    });
  });

  it('creates a discovery group: the mode choice says what it does, and the list shows it', async () => {
    let body: unknown;
    const { user } = await renderPage(
      10,
      {
        'POST /api/groups': (req: { body: unknown }) => {
          body = req.body;
          return { status: 201, body: { success: true, data: group({ mode: 'discovery' }) } };
        },
      },
      [],
    );
    await user.click(await screen.findByRole('button', { name: 'New group' }));
    const dialog = await screen.findByRole('dialog');
    const all = within(dialog).getByRole('radio', { name: 'All tools' });
    const discovery = within(dialog).getByRole('radio', { name: 'Discovery: two tools, search and call' });
    expect(all).toBeChecked();
    expect(discovery).toHaveAccessibleDescription(/search the chosen tools by what they do/);
    // Nothing marks it unavailable any more.
    expect(discovery).toBeEnabled();
    await user.type(within(dialog).getByLabelText('Name'), 'finder');
    await user.click(discovery);
    await user.click(await within(dialog).findByRole('checkbox', { name: 'Everything' }));
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(body).toMatchObject({ name: 'finder', mode: 'discovery', members: [{ service_id: 1 }] });
  });

  it('keeps a discovery group’s mode when it is edited, and reads the choice in Chinese', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    let body: unknown;
    const { user } = await renderPage(
      10,
      {
        'PUT /api/groups/3': (req: { body: unknown }) => {
          body = req.body;
          return ok(group({ mode: 'discovery' }));
        },
      },
      [group({ mode: 'discovery' })],
    );
    expect(await screen.findByTestId('group-mode')).toHaveTextContent('发现模式');
    await user.click(await screen.findByRole('button', { name: '编辑' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByRole('radio', { name: '发现模式：两个工具，搜索和调用' })).toBeChecked();
    expect(within(dialog).getByRole('radio', { name: '全部工具' })).not.toBeChecked();
    await user.click(within(dialog).getByRole('button', { name: '保存' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(body).toMatchObject({ mode: 'discovery' });
  });

  it('checks the form, and shows the server’s localised 400 inline, keeping what was typed', async () => {
    const { user, api } = await renderPage(10, { 'POST /api/groups': () => fail(400, '分组中的工具名称冲突：everything__echo') }, []);
    await user.click(await screen.findByRole('button', { name: 'New group' }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'Bad Name');
    await user.clear(within(dialog).getByLabelText('Separator'));
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(within(dialog).getByText(/Use lowercase letters/)).toBeInTheDocument();
    expect(within(dialog).getByText(/Use 1 to 8 of/)).toBeInTheDocument();
    expect(within(dialog).getByText('Choose at least one service.')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/groups')).toHaveLength(0);

    await user.clear(within(dialog).getByLabelText('Name'));
    await user.type(within(dialog).getByLabelText('Name'), 'dev');
    await user.type(within(dialog).getByLabelText('Separator'), '.');
    await user.click(await within(dialog).findByRole('checkbox', { name: 'Everything' }));
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    const said = await within(dialog).findByText('分组中的工具名称冲突：everything__echo');
    expect(within(dialog).getByLabelText('Name')).toHaveValue('dev');
    // A refusal without a field is said above the form, and takes the focus.
    await waitFor(() => expect(said.closest('[tabindex="-1"]')).toHaveFocus());
  });

  it('clears "choose at least one service" once one is chosen, and shows a refusal naming a field beside it', async () => {
    const { user } = await renderPage(
      10,
      {
        'POST /api/groups': () => ({
          status: 400,
          body: { success: false, message: 'A group named "dev" already exists', code: 'group_name_taken', field: 'name' },
        }),
      },
      [],
    );
    await user.click(await screen.findByRole('button', { name: 'New group' }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'dev');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(within(dialog).getByText('Choose at least one service.')).toBeInTheDocument();
    await user.click(await within(dialog).findByRole('checkbox', { name: 'Everything' }));
    expect(within(dialog).queryByText('Choose at least one service.')).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    const name = within(dialog).getByLabelText('Name');
    await waitFor(() => expect(name).toHaveAccessibleDescription(/A group named "dev" already exists/));
    expect(name).toHaveAttribute('aria-invalid', 'true');
    // The refusal takes the focus (decision 0058), as in the service dialogs.
    await waitFor(() => expect(name).toHaveFocus());
    expect(within(dialog).queryByText('The group could not be saved')).not.toBeInTheDocument();
    await user.type(name, '2');
    expect(name).not.toHaveAttribute('aria-invalid');
  });

  it('offers a subset of tools only once they are listed, so that unchoosing the whole service keeps them chosen', async () => {
    let listed: (reply: ReturnType<typeof tools>) => void = () => undefined;
    const { user } = await renderPage(10, { 'GET /api/mcp_services/1/tools': () => new Promise((done) => (listed = done)) }, []);
    await user.click(await screen.findByRole('button', { name: 'New group' }));
    const dialog = await screen.findByRole('dialog');
    await user.click(await within(dialog).findByRole('checkbox', { name: 'Everything' }));
    const whole = within(dialog).getByRole('checkbox', { name: 'All tools, including tools it gains later' });
    expect(whole).toBeChecked();
    expect(whole).toBeDisabled();
    listed(tools(['echo', 'add']));
    await waitFor(() => expect(whole).toBeEnabled());
    await user.click(whole);
    const picker = within(dialog).getByRole('group', { name: 'Everything' });
    expect(within(picker).getByRole('checkbox', { name: /^echo/ })).toBeChecked();
    expect(within(picker).getByRole('checkbox', { name: /^add/ })).toBeChecked();
  });

  it('a refusal about the members is said under them and takes the focus', async () => {
    const { user } = await renderPage(
      10,
      {
        'POST /api/groups': () => ({
          status: 400,
          body: {
            success: false,
            message: 'Two tools would both be called everything__echo',
            code: 'group_tool_collision',
            field: 'members',
          },
        }),
      },
      [],
    );
    await user.click(await screen.findByRole('button', { name: 'New group' }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'dev');
    await user.click(await within(dialog).findByRole('checkbox', { name: 'Everything' }));
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    const said = await within(dialog).findByText('Two tools would both be called everything__echo');
    await waitFor(() => expect(said).toHaveFocus());
    expect(within(dialog).queryByText('The group could not be saved')).not.toBeInTheDocument();
  });

  it('offers tools by the name clients see, with the original name beside it, and not the tools switched off', async () => {
    const { user, api } = await renderPage(
      10,
      {
        'GET /api/mcp_services/1/tools': () =>
          ok({
            tools: [
              {
                name: 'say',
                original_name: 'echo',
                enabled: true,
                description: '',
                original_description: '',
                alias: 'say',
                input_schema: {},
              },
              {
                name: 'add',
                original_name: 'add',
                enabled: false,
                description: '',
                original_description: '',
                alias: null,
                input_schema: {},
              },
              {
                name: 'sleep',
                original_name: 'sleep',
                enabled: true,
                description: '',
                original_description: '',
                alias: null,
                input_schema: {},
              },
            ],
            dormant: [],
          }),
        'POST /api/groups': () => ok(group({ id: 9, name: 'new' })),
      },
      [],
    );
    await user.click(await screen.findByRole('button', { name: 'New group' }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'new');
    await user.click(await within(dialog).findByRole('checkbox', { name: 'Everything' }));
    const whole = within(dialog).getByRole('checkbox', { name: 'All tools, including tools it gains later' });
    await waitFor(() => expect(whole).toBeEnabled());
    await user.click(whole);
    const picker = within(dialog).getByRole('group', { name: 'Everything' });
    const say = within(picker).getByRole('checkbox', { name: /^say/ });
    expect(say).toBeChecked();
    expect(say.closest('label')).toHaveTextContent('sayOriginal name: echo');
    const add = within(picker).getByRole('checkbox', { name: /^add/ });
    expect(add).toBeDisabled();
    expect(add).not.toBeChecked();
    expect(add).toHaveAccessibleDescription('Switched off on the service: clients cannot call it');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/groups')).toHaveLength(1));
    expect(api.callsTo('POST', '/api/groups')[0]?.body).toMatchObject({ members: [{ service_id: 1, tools: ['echo', 'sleep'] }] });
  });

  it('edits a group from what the server holds, and saves it with PUT', async () => {
    let body: unknown;
    const { user } = await renderPage(10, {
      'PUT /api/groups/3': (req: { body: unknown }) => {
        body = req.body;
        return ok(group());
      },
    });
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit group' });
    expect(within(dialog).getByLabelText('Name')).toHaveValue('dev');
    expect(within(dialog).getByLabelText('Display name')).toHaveValue('Dev tools');
    expect(await within(dialog).findByRole('checkbox', { name: 'read_graph' })).toBeChecked();
    expect(within(dialog).getByRole('checkbox', { name: 'create_entities' })).not.toBeChecked();
    await user.click(within(dialog).getByRole('checkbox', { name: 'create_entities' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(body).toMatchObject({ name: 'dev', members: [{ service_id: 1 }, { service_id: 2, tools: ['read_graph', 'create_entities'] }] });
  });

  it('deletes a group after confirmation', async () => {
    const { user, api } = await renderPage(10, { 'DELETE /api/groups/3': () => ok() });
    await user.click(await screen.findByRole('button', { name: 'Delete' }));
    const confirm = await screen.findByRole('alertdialog');
    expect(confirm).toHaveTextContent('Dev tools');
    await user.click(within(confirm).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.callsTo('DELETE', '/api/groups/3')).toHaveLength(1));
  });

  it('reads in Chinese', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    await renderPage(10);
    expect(await screen.findByRole('heading', { name: '分组' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '新建分组' })).toBeInTheDocument();
    expect(await screen.findByText(/全部工具/)).toBeInTheDocument();
  });

  it('tells a user in Chinese that only the services open to them are listed', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    await renderPage(1);
    expect(
      await screen.findByText('向你开放的分组：一个端点连接多个服务。这里只列出你可以使用的服务，你也只能用到它们的工具。'),
    ).toBeInTheDocument();
  });
});
