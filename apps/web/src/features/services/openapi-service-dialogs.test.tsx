import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { InstalledService } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { fail, fakeApi, ok, storeSession } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { renderWithProviders } from '../../test/render';
import { ServicesPage } from './services-page';
import { openEdit } from './test-fixtures';

type Routes = Parameters<typeof fakeApi>[0];

/** Pastes a long value rather than typing it key by key (the same change events, far quicker on a loaded machine). */
async function fill(user: ReturnType<typeof userEvent.setup>, field: HTMLElement, text: string) {
  await user.click(field);
  await user.paste(text);
}

const tools = [
  { name: 'listPets', description: 'List pets', method: 'GET', path: '/pets', input_schema: { type: 'object' } },
  { name: 'createPet', description: 'Create a pet', method: 'POST', path: '/pets', input_schema: { type: 'object' } },
];

async function openCustom(routes: Routes = {}) {
  storeSession({ role: 10 });
  const api = fakeApi({ 'GET /api/mcp_market/installed': () => ok([]), ...routes });
  const user = userEvent.setup();
  await renderWithProviders(<ServicesPage />);
  await user.click(await screen.findByRole('button', { name: /Add Service/ }));
  await user.click(await screen.findByRole('menuitem', { name: 'Custom Install' }));
  const dialog = await screen.findByRole('dialog', { name: 'Custom Install' });
  await user.selectOptions(within(dialog).getByLabelText('Type'), 'openapi');
  return { api, user, dialog };
}

const pets = installedService({
  id: 7,
  name: 'pets',
  display_name: 'Pets',
  type: 'openapi',
  command: 'https://api.example.com/openapi.yaml',
  headers_json: JSON.stringify({ 'X-API-Key': 'secret-key', 'X-Trace': 'on' }),
  openapi: {
    uploaded: false,
    title: 'Pets',
    version: '1.0.0',
    base_url: 'https://api.example.com/v1',
    base_url_override: 'https://api.example.com/v1',
    operation_filter: { tags: ['pets', 'store'] },
    operations: 3,
  },
});

describe('OpenAPI services in the custom install dialog (docs/console.md §2.7)', () => {
  it('previews the tools of a document URL, hides a preview that no longer matches, then creates with the credentials', async () => {
    const { api, user, dialog } = await openCustom({
      'POST /api/mcp_market/custom_service': (req) => {
        const body = req.body as { preview?: boolean };
        return body.preview
          ? {
              status: 201,
              body: {
                success: true,
                data: {
                  service_id: 0,
                  name: 'pets',
                  display_name: 'pets',
                  status: 'preview',
                  tools,
                  base_url: 'https://api.example.com/v1',
                },
              },
            }
          : {
              status: 201,
              body: {
                success: true,
                data: { service_id: 9, name: 'pets', display_name: 'pets', status: 'completed', health_status: 'healthy' },
              },
            };
      },
    });
    const d = within(dialog);
    expect(d.queryByLabelText('Server URL')).not.toBeInTheDocument();
    expect(d.queryByLabelText('Request headers')).not.toBeInTheDocument();

    // The preview checks the document URL first, without a request.
    await user.click(d.getByRole('button', { name: 'Preview tools' }));
    expect(await d.findByText('URL cannot be empty')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')).toHaveLength(0);

    await fill(user, d.getByLabelText('Document URL'), 'https://api.example.com/openapi.yaml');
    await fill(user, d.getByLabelText('Tags'), 'pets, store ,');
    await user.click(d.getByRole('button', { name: 'Preview tools' }));
    expect(await d.findByText('The document makes 2 tools, requests going to https://api.example.com/v1.')).toBeInTheDocument();
    const preview = d.getByTestId('openapi-preview');
    expect(within(preview).getByText('listPets')).toBeInTheDocument();
    expect(within(preview).getByText('POST /pets')).toBeInTheDocument();
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')[0]?.body).toEqual({
      name: '',
      type: 'openapi',
      url: 'https://api.example.com/openapi.yaml',
      base_url: '',
      operation_filter: { tags: ['pets', 'store'] },
      preview: true,
    });

    await fill(user, d.getByLabelText('Base URL (optional)'), 'https://api.example.com/v2');
    expect(d.queryByTestId('openapi-preview')).not.toBeInTheDocument();

    await user.type(d.getByLabelText('Name'), 'pets');
    await user.selectOptions(d.getByLabelText('Authentication'), 'header');
    await user.click(d.getByRole('button', { name: 'Install' }));
    expect(await d.findByText('Give the name the key is sent under')).toBeInTheDocument();
    expect(d.getByText('Give the secret, or choose no authentication')).toBeInTheDocument();
    await user.type(d.getByLabelText('Header name'), 'X-API-Key');
    const secret = d.getByLabelText('Value');
    expect(secret).toHaveAttribute('type', 'password');
    await user.type(secret, 'secret-key');
    await user.click(d.getByRole('button', { name: 'Install' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Custom Install' })).not.toBeInTheDocument(), { timeout: 3000 });
    expect(api.callsTo('POST', '/api/mcp_market/custom_service').at(-1)?.body).toEqual({
      name: 'pets',
      type: 'openapi',
      url: 'https://api.example.com/openapi.yaml',
      base_url: 'https://api.example.com/v2',
      operation_filter: { tags: ['pets', 'store'] },
      headers: { 'X-API-Key': 'secret-key' },
      environments: {},
    });
    // The whole journey takes some 14 s on a loaded machine, near the default 20 s.
  }, 45_000);

  it('uploads a file, sends bearer credentials as the variable the server reads, and shows a refusal in the dialog with the form kept', async () => {
    const { api, user, dialog } = await openCustom({
      'POST /api/mcp_market/custom_service': () => fail(400, 'The OpenAPI document describes no operations', 'openapi_refused'),
    });
    const d = within(dialog);
    await user.type(d.getByLabelText('Name'), 'empty');
    await user.click(d.getByRole('radio', { name: 'Upload a file' }));
    await user.click(d.getByRole('button', { name: 'Install' }));
    expect(await d.findByText('Choose an OpenAPI document file')).toBeInTheDocument();
    const text = 'openapi: 3.0.3\ninfo: {title: t, version: "1"}\npaths: {}\n';
    await user.upload(d.getByLabelText('Document file'), new File([text], 'empty.yaml', { type: 'application/yaml' }));
    expect(await d.findByText(/Chosen: empty\.yaml/)).toBeInTheDocument();
    await user.selectOptions(d.getByLabelText('Authentication'), 'bearer');
    await user.type(d.getByLabelText('Token'), 'tok-1');

    await user.click(d.getByRole('button', { name: 'Install' }));
    // Said beside the document, as any refusal of the dialog (decision 0058): read out, the file marked and focused.
    const refused = 'The OpenAPI document was refused: The OpenAPI document describes no operations';
    const file = d.getByLabelText('Document file');
    await waitFor(() => expect(file).toHaveFocus());
    expect(file).toHaveAttribute('aria-invalid', 'true');
    expect(file).toHaveAccessibleDescription(expect.stringContaining(refused));
    expect(d.getByRole('alert')).toHaveTextContent(refused);
    expect(screen.getByRole('dialog', { name: 'Custom Install' })).toBeInTheDocument();
    expect(d.getByLabelText('Name')).toHaveValue('empty');
    expect(d.getByLabelText('Token')).toHaveValue('tok-1');
    expect(api.callsTo('POST', '/api/mcp_market/custom_service')[0]?.body).toMatchObject({
      type: 'openapi',
      document: text,
      environments: { OPENAPI_BEARER_TOKEN: 'tok-1' },
      headers: {},
    });

    // A preview's refusal is shown the same way; the other source hides the file, and its refusal goes.
    await user.click(d.getByRole('button', { name: 'Preview tools' }));
    await waitFor(() => expect(api.callsTo('POST', '/api/mcp_market/custom_service')).toHaveLength(2));
    await waitFor(() => expect(d.getByLabelText('Document file')).toHaveFocus());
    expect(d.getByRole('alert')).toHaveTextContent(refused);
    await user.click(d.getByRole('radio', { name: 'From a URL' }));
    expect(d.queryByRole('alert')).not.toBeInTheDocument();
    expect(d.getByLabelText('Document URL')).not.toHaveAttribute('aria-invalid');
  });

  it('says a preview refused for another reason, or not answered, above the form under its own title, and focuses it', async () => {
    let answer = () => fail(400, 'The base URL is not a valid http(s) URL');
    const { user, dialog } = await openCustom({ 'POST /api/mcp_market/custom_service': () => answer() });
    const d = within(dialog);
    await fill(user, d.getByLabelText('Document URL'), 'https://api.example.com/openapi.yaml');
    await user.click(d.getByRole('button', { name: 'Preview tools' }));
    const alert = await d.findByRole('alert');
    expect(alert).toHaveTextContent('Refused by the server');
    expect(alert).toHaveTextContent('The base URL is not a valid http(s) URL');
    expect(alert).not.toHaveTextContent('Failed to create the service');
    await waitFor(() => expect(alert.parentElement).toHaveFocus());
    expect(d.getByLabelText('Document URL')).not.toHaveAttribute('aria-invalid');

    answer = () => ({ status: 500, body: { success: false, message: 'Internal error' } });
    await user.click(d.getByRole('button', { name: 'Preview tools' }));
    await waitFor(() => expect(d.getByRole('alert')).toHaveTextContent('Internal error'));
    expect(d.getByRole('alert')).toHaveTextContent('Refused by the server');
  });
});

describe('OpenAPI refusals of the base URL and the filter (decision 0058)', () => {
  it('a preview whose filter keeps nothing is said beside the filter list given, marked and focused', async () => {
    const { user, dialog } = await openCustom({
      'POST /api/mcp_market/custom_service': () =>
        fail(400, "The filter keeps none of the document's 5 operations", 'openapi_refused', 'operation_filter'),
    });
    const d = within(dialog);
    await fill(user, d.getByLabelText('Document URL'), 'https://api.example.com/openapi.yaml');
    const paths = d.getByLabelText('Paths');
    await fill(user, paths, '/nowhere');
    await user.click(d.getByRole('button', { name: 'Preview tools' }));
    await waitFor(() => expect(paths).toHaveFocus(), { timeout: 3000 });
    expect(paths).toHaveAttribute('aria-invalid', 'true');
    expect(paths).toHaveAccessibleDescription("The filter keeps none of the document's 5 operations");
    // Not the document's fault: the URL is not marked, and the one thing said is the field's own message.
    expect(d.getByLabelText('Document URL')).not.toHaveAttribute('aria-invalid');
    expect(d.getAllByRole('alert').map((a) => a.textContent)).toEqual(["The filter keeps none of the document's 5 operations"]);
  });

  it('a saved base URL the server refuses is said beside the base URL', async () => {
    const { user, dialog } = await openEdit(pets, {
      'PUT /api/mcp_services/7': () => fail(400, 'Requests to 127.0.0.1 are not allowed', 'address_refused', 'base_url'),
    });
    const d = within(dialog);
    const base = d.getByLabelText('Base URL (optional)');
    await user.clear(base);
    await fill(user, base, 'http://127.0.0.1:9/api');
    await user.click(d.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(base).toHaveFocus(), { timeout: 3000 });
    expect(base).toHaveAttribute('aria-invalid', 'true');
    expect(base).toHaveAccessibleDescription(expect.stringContaining('Requests to 127.0.0.1 are not allowed'));
    expect(d.getByLabelText('Document URL')).not.toHaveAttribute('aria-invalid');
  });
});

describe('OpenAPI services in the edit dialog (docs/console.md §2.8)', () => {
  it('shows the document URL, base URL, filter and the stored key masked, and saves them with the mask kept', async () => {
    const { api, user, dialog } = await openEdit(pets, { 'PUT /api/mcp_services/7': () => ok(undefined, 'Service updated') });
    const d = within(dialog);
    expect(d.getByLabelText('Type')).toHaveValue('openapi');
    expect(d.getByLabelText('Document URL')).toHaveValue('https://api.example.com/openapi.yaml');
    expect(d.getByLabelText('Base URL (optional)')).toHaveValue('https://api.example.com/v1');
    expect(d.getByLabelText('Tags')).toHaveValue('pets, store');
    expect(d.getByLabelText('Authentication')).toHaveValue('header');
    expect(d.getByLabelText('Header name')).toHaveValue('X-API-Key');
    expect(d.getByLabelText('Value')).toHaveValue('********');
    expect(d.getByText('Stored; type a new value to replace it.')).toBeInTheDocument();

    await user.clear(d.getByLabelText('Base URL (optional)'));
    await fill(user, d.getByLabelText('Base URL (optional)'), 'https://eu.example.com/v1');
    await user.click(d.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Edit Service' })).not.toBeInTheDocument(), { timeout: 3000 });
    expect(api.callsTo('PUT', '/api/mcp_services/7')[0]?.body).toEqual({
      display_name: 'Pets',
      description: 'Description of service 7',
      command: 'https://api.example.com/openapi.yaml',
      base_url: 'https://eu.example.com/v1',
      operation_filter: { tags: ['pets', 'store'] },
      // The key is sent back masked (the server keeps it); the other header goes back as it is.
      headers_json: JSON.stringify({ 'X-Trace': 'on', 'X-API-Key': '********' }),
      default_envs_json: '{}',
    });
  });

  it('asks for the secret again when the header is renamed, and shows a refused save in the dialog', async () => {
    const { user, dialog } = await openEdit(pets, {
      'PUT /api/mcp_services/7': () =>
        fail(400, 'The server at https://api.example.com/x.yaml answered HTTP 404 instead of the OpenAPI document'),
    });
    const d = within(dialog);
    await user.type(d.getByLabelText('Header name'), '2');
    expect(d.getByLabelText('Value')).toHaveValue('');
    await user.type(d.getByLabelText('Value'), 'new-key');
    await user.clear(d.getByLabelText('Document URL'));
    await fill(user, d.getByLabelText('Document URL'), 'https://api.example.com/x.yaml');
    await user.click(d.getByRole('button', { name: 'Save' }));
    const refused = await d.findByText(/answered HTTP 404 instead of the OpenAPI document/);
    // Without the document's refusal code (or a field) it does not blame the document: the alert above the form.
    expect(refused.closest('[role=alert]')).toHaveTextContent('Update Failed');
    expect(d.getByLabelText('Document URL')).not.toHaveAttribute('aria-invalid');
    expect(screen.getByRole('dialog', { name: 'Edit Service' })).toBeInTheDocument();
    expect(d.getByLabelText('Document URL')).toHaveValue('https://api.example.com/x.yaml');
  });

  it('says a refused document under its URL on save, marked and focused, until the URL is edited', async () => {
    const { user, dialog } = await openEdit(pets, {
      'PUT /api/mcp_services/7': () =>
        fail(400, 'The server at https://api.example.com/x.yaml answered HTTP 404 instead of the OpenAPI document', 'openapi_refused'),
    });
    const d = within(dialog);
    const url = d.getByLabelText('Document URL');
    await user.clear(url);
    await fill(user, url, 'https://api.example.com/x.yaml');
    await user.click(d.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(url).toHaveFocus(), { timeout: 3000 });
    expect(url).toHaveAttribute('aria-invalid', 'true');
    expect(url).toHaveAccessibleDescription(
      'The OpenAPI document was refused: The server at https://api.example.com/x.yaml answered HTTP 404 instead of the OpenAPI document',
    );
    await user.type(url, 'x');
    expect(url).not.toHaveAttribute('aria-invalid');
    expect(d.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('keeps an uploaded document while no other file is chosen', async () => {
    const uploaded = installedService({
      ...pets,
      command: '',
      headers_json: '{}',
      default_envs_json: JSON.stringify({ OPENAPI_BASIC_USERNAME: 'ann', OPENAPI_BASIC_PASSWORD: 'pw' }),
      openapi: {
        ...(pets.openapi as NonNullable<InstalledService['openapi']>),
        uploaded: true,
        base_url_override: '',
        operation_filter: {},
      },
    });
    const { api, user, dialog } = await openEdit(uploaded, { 'PUT /api/mcp_services/7': () => ok(undefined, 'Service updated') });
    const d = within(dialog);
    expect(d.getByRole('radio', { name: 'Upload a file' })).toBeChecked();
    expect(d.getByText('The service runs the uploaded document Pets 1.0.0; choose a file to replace it.')).toBeInTheDocument();
    expect(d.getByLabelText('User name')).toHaveValue('ann');
    expect(d.getByLabelText('Password')).toHaveValue('********');
    await user.click(d.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.callsTo('PUT', '/api/mcp_services/7')).toHaveLength(1), { timeout: 3000 });
    const body = api.callsTo('PUT', '/api/mcp_services/7')[0]?.body as Record<string, unknown>;
    expect(body.command).toBe('');
    expect(body.document).toBeUndefined();
    expect(JSON.parse(String(body.default_envs_json))).toEqual({ OPENAPI_BASIC_USERNAME: 'ann', OPENAPI_BASIC_PASSWORD: '********' });
  });
});
