import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ServiceTools } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { ServicesPage } from './services-page';

const listed: ServiceTools = {
  tools: [
    {
      name: 'echo',
      original_name: 'echo',
      enabled: true,
      description: 'Echoes back the input',
      original_description: 'Echoes back the input',
      alias: null,
      input_schema: { type: 'object', properties: { message: { type: 'string' } } },
    },
    {
      name: 'get-sum',
      original_name: 'get-sum',
      enabled: false,
      description: 'Adds two numbers',
      original_description: 'Adds two numbers',
      alias: null,
      input_schema: { type: 'object' },
    },
  ],
  dormant: [],
};

async function openTools(role: number, routes: Parameters<typeof fakeApi>[0] = {}, count = '1 of 2 tools enabled') {
  storeSession({ role });
  const service = installedService({ id: 7, name: 'everything', display_name: 'Everything' });
  const api = fakeApi({
    'GET /api/mcp_market/installed': () => ok([service]),
    'GET /api/user/self': () => ok(selfUser({ role })),
    'GET /api/mcp_services/7/tools': () => ok(listed),
    ...routes,
  });
  const user = userEvent.setup();
  await renderWithProviders(<ServicesPage />);
  await user.click((await screen.findAllByRole('button', { name: 'Tools of Everything' }))[0] as HTMLElement);
  const dialog = await screen.findByRole('dialog');
  await within(dialog).findByText(count);
  return { api, user, dialog };
}

describe('the Tools dialog of a service (decision 0026)', () => {
  it('lists every tool with its description and input schema; users cannot change them', async () => {
    const { dialog } = await openTools(1);
    expect(within(dialog).getAllByTestId('tool-row')).toHaveLength(2);
    expect(within(dialog).getByText('Echoes back the input')).toBeInTheDocument();
    expect(within(dialog).getByText(/"message"/)).toBeInTheDocument();
    expect(within(dialog).getByRole('switch', { name: 'Enable tool echo' })).toBeDisabled();
    expect(within(dialog).queryByRole('textbox', { name: /Name clients see/ })).toBeNull();
  });

  it('lets an admin switch a tool on and rename it, and shows what the gateway answered', async () => {
    const { api, user, dialog } = await openTools(10, {
      'PUT /api/mcp_services/7/tools/get-sum': () =>
        ok({ ...listed, tools: listed.tools.map((t) => (t.original_name === 'get-sum' ? { ...t, enabled: true } : t)) }),
      'PUT /api/mcp_services/7/tools/echo': () =>
        ok({ ...listed, tools: listed.tools.map((t) => (t.original_name === 'echo' ? { ...t, name: 'say', alias: 'say' } : t)) }),
    });
    await user.click(within(dialog).getByRole('switch', { name: 'Enable tool get-sum' }));
    await within(dialog).findByText('2 of 2 tools enabled');
    expect(api.callsTo('PUT', '/api/mcp_services/7/tools/get-sum')[0]?.body).toEqual({ enabled: true });

    // The rename field has a visible label, and its accessible name starts with it.
    expect(within(dialog).getAllByText('Name clients see')[0]).toBeVisible();
    await user.type(within(dialog).getByRole('textbox', { name: 'Name clients see (echo)' }), 'say');
    await user.click(within(dialog).getAllByRole('button', { name: 'Save' })[0] as HTMLElement);
    await within(dialog).findByText('Original name: echo');
    expect(api.callsTo('PUT', '/api/mcp_services/7/tools/echo')[0]?.body).toEqual({ alias: 'say', description: null });
  });

  it('tries a tool with a form made from its input schema and shows the result with its time', async () => {
    const { api, user, dialog } = await openTools(1, {
      'POST /api/mcp_services/7/tools/echo/call': () =>
        ok({ is_error: false, content: [{ type: 'text', text: 'Echo: hello' }], duration_ms: 12.5 }),
    });
    const echo = within(dialog).getAllByTestId('tool-row')[0] as HTMLElement;
    await user.click(within(echo).getByText('Try it'));
    await user.type(within(echo).getByLabelText('message'), 'hello');
    await user.click(within(echo).getByRole('button', { name: 'Run' }));
    const result = await within(echo).findByTestId('try-result');
    expect(result).toHaveTextContent('Echo: hello');
    expect(result).toHaveTextContent('Answered in 12.5 ms');
    expect(api.callsTo('POST', '/api/mcp_services/7/tools/echo/call')[0]?.body).toEqual({ arguments: { message: 'hello' } });
  });

  it('filters the tools by name, original name or description, keeping what was typed in a hidden row', async () => {
    const { user, dialog } = await openTools(10);
    const filter = within(dialog).getByRole('searchbox', { name: 'Filter tools' });
    await user.type(within(dialog).getByRole('textbox', { name: 'Name clients see (echo)' }), 'draft');
    await user.type(filter, 'NUMBERS');
    const rows = within(dialog).getAllByTestId('tool-row');
    expect(rows[0]).not.toBeVisible();
    expect(rows[1]).toBeVisible();
    expect(within(dialog).getByText('1 of 2 tools shown')).toBeInTheDocument();
    await user.clear(filter);
    await user.type(filter, 'nothing like it');
    expect(within(dialog).getByText('No tool matches “nothing like it”.')).toBeInTheDocument();
    await user.clear(filter);
    expect(within(dialog).getByRole('textbox', { name: 'Name clients see (echo)' })).toHaveValue('draft');
  });

  it('does not send a Try it form with an empty required field, and says so beside the field', async () => {
    const required: ServiceTools = {
      tools: [
        {
          ...(listed.tools[0] as ServiceTools['tools'][number]),
          input_schema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
        },
      ],
      dormant: [],
    };
    const { api, user, dialog } = await openTools(1, { 'GET /api/mcp_services/7/tools': () => ok(required) }, '1 of 1 tools enabled');
    const echo = within(dialog).getAllByTestId('tool-row')[0] as HTMLElement;
    await user.click(within(echo).getByText('Try it'));
    await user.click(within(echo).getByRole('button', { name: 'Run' }));
    const field = within(echo).getByLabelText('message *');
    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(field).toHaveAccessibleDescription('message is required');
    expect(field).toHaveFocus();
    expect(api.callsTo('POST', '/api/mcp_services/7/tools/echo/call')).toHaveLength(0);
    await user.type(field, 'x');
    expect(field).not.toHaveAttribute('aria-invalid');
  });

  it('names the tool by the name clients see, and tells a JSON-RPC error from an error the tool answered', async () => {
    const renamed: ServiceTools = {
      tools: [{ ...(listed.tools[0] as ServiceTools['tools'][number]), name: 'say', alias: 'say' }],
      dormant: [],
    };
    let reply = 0;
    const { user, dialog } = await openTools(
      1,
      {
        'GET /api/mcp_services/7/tools': () => ok(renamed),
        'POST /api/mcp_services/7/tools/echo/call': () => {
          reply += 1;
          if (reply === 1)
            return {
              status: 502,
              body: {
                success: false,
                message: 'The call of echo failed: upstream closed',
                code: 'jsonrpc_error',
                data: { rpc_code: -32000 },
              },
            };
          if (reply === 2)
            return ok({
              is_error: true,
              content: [{ type: 'text', text: 'MCP error -32602: Input validation error: bad' }],
              duration_ms: 3,
            });
          return ok({ is_error: true, content: [{ type: 'text', text: 'disk full' }], duration_ms: 4 });
        },
      },
      '1 of 1 tools enabled',
    );
    const row = within(dialog).getAllByTestId('tool-row')[0] as HTMLElement;
    await user.click(within(row).getByText('Try it'));
    const tryIt = within(row).getByTestId('try-tool');
    expect(tryIt).toHaveTextContent('Calls the tool as clients see it:say · Original name: echo');
    const run = within(row).getByRole('button', { name: 'Run' });
    await user.click(run);
    expect(await within(row).findByTestId('try-failure')).toHaveTextContent(
      'Protocol error: the call got no result (JSON-RPC error -32000)The call of echo failed: upstream closed',
    );
    await user.click(run);
    expect(await within(row).findByTestId('try-result')).toHaveTextContent(
      'Protocol error: the tool server refused the call (JSON-RPC error -32602), in 3 ms',
    );
    await user.click(run);
    await waitFor(() =>
      expect(within(row).getByTestId('try-result')).toHaveTextContent('The tool answered with an error (isError) in 4 ms'),
    );
    expect(within(row).getByTestId('try-result')).not.toHaveTextContent('Protocol error');
  });

  it('shows "N of M tools enabled" on a card when some are off', async () => {
    storeSession({ role: 1 });
    fakeApi({
      'GET /api/mcp_market/installed': () => ok([installedService({ id: 7, name: 'everything', tool_count: 5, tools_disabled: 2 })]),
      'GET /api/user/self': () => ok(selfUser({ role: 1 })),
    });
    await renderWithProviders(<ServicesPage />);
    expect(await screen.findByText('3 of 5 tools enabled')).toBeInTheDocument();
  });

  it('shows why the tools cannot be listed', async () => {
    storeSession({ role: 1 });
    fakeApi({
      'GET /api/mcp_market/installed': () => ok([installedService({ id: 7, name: 'everything', display_name: 'Everything' })]),
      'GET /api/user/self': () => ok(selfUser({ role: 1 })),
      'GET /api/mcp_services/7/tools': () => fail(502, 'Could not list the tools of everything: connection refused'),
    });
    const user = userEvent.setup();
    await renderWithProviders(<ServicesPage />);
    await user.click((await screen.findAllByRole('button', { name: 'Tools of Everything' }))[0] as HTMLElement);
    const dialog = await screen.findByRole('dialog');
    await waitFor(() => expect(within(dialog).getByRole('alert')).toHaveTextContent('Could not list the tools of everything'));
  });
});
