import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, ok } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { openEdit } from './test-fixtures';

const stdio = installedService({
  id: 3,
  name: 'everything',
  display_name: 'Everything',
  description: 'All the features',
  type: 'stdio',
  command: '/usr/bin/node',
  args_json: JSON.stringify(['/srv/every thing/index.js', 'stdio']),
  default_envs_json: JSON.stringify({ API_KEY: 'k=1', MODE: 'fast' }),
});

const remote = installedService({
  id: 4,
  display_name: 'Remote',
  type: 'sse',
  command: 'https://mcp.example.com/sse',
  headers_json: JSON.stringify({ 'X-Api-Key': 'secret' }),
});

describe('edit service dialog (docs/console.md §2.8)', () => {
  it('shows a stdio service: type disabled, command line read-only, variables editable', async () => {
    const { dialog } = await openEdit(stdio);
    expect(within(dialog).getByLabelText('Display name')).toHaveValue('Everything');
    expect(within(dialog).getByLabelText('Description')).toHaveValue('All the features');
    expect(within(dialog).getByLabelText('Type')).toBeDisabled();
    expect(within(dialog).getByLabelText('Type')).toHaveDisplayValue('stdio');
    const commandLine = within(dialog).getByLabelText('Command line');
    expect(commandLine).toHaveValue(`/usr/bin/node '/srv/every thing/index.js' stdio`);
    expect(commandLine).toHaveAttribute('readonly');
    // The values are secrets: masked and read-only until revealed (issue 29).
    const env = within(dialog).getByLabelText('Environment variables');
    expect(env).toHaveValue('API_KEY=••••••••\nMODE=••••••••');
    expect(env).toHaveAttribute('readonly');
    expect(within(dialog).queryByLabelText('Server URL')).not.toBeInTheDocument();
  });

  it('reveals the variables on demand, hides them again, and saves them unchanged when they were never shown', async () => {
    const { dialog, user, api } = await openEdit(stdio, { 'PUT /api/mcp_services/3': () => ok(undefined, 'Service updated') });
    const env = within(dialog).getByLabelText('Environment variables');
    await user.click(within(dialog).getByRole('button', { name: 'Show values' }));
    expect(env).toHaveValue('API_KEY=k=1\nMODE=fast');
    expect(env).not.toHaveAttribute('readonly');
    await user.click(within(dialog).getByRole('button', { name: 'Hide values' }));
    expect(env).toHaveValue('API_KEY=••••••••\nMODE=••••••••');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/mcp_services/3')).toHaveLength(1), { timeout: 3_000 });
    expect(api.callsTo('PUT', '/api/mcp_services/3')[0]?.body).toMatchObject({
      default_envs_json: JSON.stringify({ API_KEY: 'k=1', MODE: 'fast' }),
    });
  });

  it('saves a stdio service with its variables as JSON', async () => {
    const { dialog, user, api } = await openEdit(stdio, { 'PUT /api/mcp_services/3': () => ok(undefined, 'Service updated') });
    const name = within(dialog).getByLabelText('Display name');
    await user.clear(name);
    await user.type(name, 'Everything 2');
    const env = within(dialog).getByLabelText('Environment variables');
    await user.click(within(dialog).getByRole('button', { name: 'Show values' }));
    await user.clear(env);
    await user.type(env, 'API_KEY=new{enter}dropped{enter}EMPTY=');
    const isolation = within(dialog).getByLabelText('Isolation');
    expect(isolation).toHaveValue('shared');
    expect(within(dialog).getByText(/at most 10 such processes per service/)).toBeInTheDocument();
    await user.selectOptions(isolation, 'session');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Update Successful', {}, { timeout: 3_000 })).toBeInTheDocument();
    expect(api.callsTo('PUT', '/api/mcp_services/3')[0]?.body).toEqual({
      display_name: 'Everything 2',
      description: 'All the features',
      default_envs_json: JSON.stringify({ API_KEY: 'new' }),
      isolation: 'session',
    });
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Edit Service' })).not.toBeInTheDocument());
  });

  it('edits the URL and headers of a remote service', async () => {
    const { dialog, user, api } = await openEdit(remote, { 'PUT /api/mcp_services/4': () => ok() });
    const url = within(dialog).getByLabelText('Server URL');
    expect(url).toHaveValue('https://mcp.example.com/sse');
    expect(within(dialog).getByLabelText('Request headers')).toHaveValue('X-Api-Key=••••••••');
    await user.clear(url);
    await user.type(url, 'https://other.example.com/sse');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/mcp_services/4')).toHaveLength(1), { timeout: 3_000 });
    expect(api.callsTo('PUT', '/api/mcp_services/4')[0]?.body).toEqual({
      display_name: 'Remote',
      description: remote.description,
      command: 'https://other.example.com/sse',
      headers_json: JSON.stringify({ 'X-Api-Key': 'secret' }),
    });
  });

  it('requires a display name and a valid URL, and sends nothing until they are', async () => {
    const { dialog, user, api } = await openEdit(remote);
    await user.clear(within(dialog).getByLabelText('Display name'));
    await user.clear(within(dialog).getByLabelText('Server URL'));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Display name cannot be empty')).toBeInTheDocument();
    expect(within(dialog).getByText('URL cannot be empty')).toBeInTheDocument();
    await user.type(within(dialog).getByLabelText('Server URL'), 'nope');
    expect(within(dialog).queryByText('URL cannot be empty')).not.toBeInTheDocument();
    expect(api.callsTo('PUT', '/api/mcp_services/4')).toHaveLength(0);
  });

  it("shows 'Update Failed' with the server's message and stays open", async () => {
    const { dialog, user } = await openEdit(remote, { 'PUT /api/mcp_services/4': () => fail(400, 'Invalid request header "bad key"') });
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Update Failed', {}, { timeout: 3_000 })).toBeInTheDocument();
    expect(screen.getByText('Invalid request header "bad key"')).toBeInTheDocument();
    expect(screen.getByRole('dialog', { name: 'Edit Service' })).toBeInTheDocument();
  });

  it('shows a refusal that names a field beside that field, keeps the input, and clears it once the field is edited', async () => {
    const { dialog, user } = await openEdit(remote, {
      'PUT /api/mcp_services/4': () => ({
        status: 400,
        body: { success: false, message: 'The address 10.0.0.1 is on a private network', code: 'address_refused', field: 'command' },
      }),
    });
    const url = within(dialog).getByLabelText('Server URL');
    await user.clear(url);
    await user.type(url, 'http://10.0.0.1/sse');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(url).toHaveAccessibleDescription('The address 10.0.0.1 is on a private network'), { timeout: 3_000 });
    expect(url).toHaveAttribute('aria-invalid', 'true');
    expect(url).toHaveValue('http://10.0.0.1/sse');
    expect(screen.queryByText('Update Failed')).not.toBeInTheDocument();
    await user.type(url, 'x');
    expect(within(dialog).queryByText('The address 10.0.0.1 is on a private network')).not.toBeInTheDocument();
  });
});
