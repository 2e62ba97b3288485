import { describe, expect, it } from 'vitest';
import { emptyOpenApiFields } from './openapi-form';
import {
  type CustomServiceForm,
  type EditServiceForm,
  emptyCustomServiceForm,
  urlError,
  validateCustomService,
  validateEditService,
} from './service-form';

const custom = (overrides: Partial<CustomServiceForm>): CustomServiceForm => ({ ...emptyCustomServiceForm, name: 'svc', ...overrides });

describe('custom service validation (docs/console.md §5)', () => {
  it('defaults to streamable HTTP', () => {
    expect(emptyCustomServiceForm.type).toBe('streamableHttp');
  });

  it('requires a name, with the placeholder text as the message', () => {
    expect(validateCustomService(custom({ name: '  ', url: 'https://x.test/mcp' }))).toEqual({ name: 'form.namePlaceholder' });
  });

  it('checks the stdio command', () => {
    expect(validateCustomService(custom({ type: 'stdio', command: '' }))).toEqual({ command: 'form.errors.commandRequired' });
    expect(validateCustomService(custom({ type: 'stdio', command: 'node x.js' }))).toEqual({ command: 'form.errors.commandNotAllowed' });
    expect(validateCustomService(custom({ type: 'stdio', command: 'npx -y' }))).toEqual({ command: 'form.errors.commandParseFailed' });
    expect(validateCustomService(custom({ type: 'stdio', command: 'npx -y pkg' }))).toEqual({});
  });

  it('ignores the URL for stdio and the command for sse and streamable HTTP', () => {
    expect(validateCustomService(custom({ type: 'stdio', command: 'uvx pkg', url: 'junk' }))).toEqual({});
    expect(validateCustomService(custom({ type: 'sse', command: 'junk', url: 'http://x.test/sse' }))).toEqual({});
  });

  it.each(['sse', 'streamableHttp'] as const)('requires a valid URL for %s', (type) => {
    expect(validateCustomService(custom({ type, url: '' }))).toEqual({ url: 'form.errors.urlRequired' });
    expect(validateCustomService(custom({ type, url: 'not a url' }))).toEqual({ url: 'form.errors.urlInvalid' });
  });

  it('reports every failing field at once', () => {
    expect(validateCustomService(custom({ name: '', type: 'sse', url: '' }))).toEqual({
      name: 'form.namePlaceholder',
      url: 'form.errors.urlRequired',
    });
  });
});

describe('urlError', () => {
  it('accepts http and https addresses only', () => {
    expect(urlError('https://mcp.example.com/mcp')).toBeUndefined();
    expect(urlError(' http://127.0.0.1:8080/sse ')).toBeUndefined();
    expect(urlError('ftp://x.test')).toBe('form.errors.urlInvalid');
    expect(urlError('javascript:alert(1)')).toBe('form.errors.urlInvalid');
    expect(urlError('   ')).toBe('form.errors.urlRequired');
  });
});

describe('edit service validation (docs/console.md §5)', () => {
  const edit = (overrides: Partial<EditServiceForm>): EditServiceForm => ({
    displayName: 'Name',
    description: '',
    type: 'streamableHttp',
    isolation: 'shared',
    environments: '',
    url: 'https://x.test/mcp',
    headers: '',
    ...emptyOpenApiFields,
    uploadKept: false,
    ...overrides,
  });

  it('requires a display name', () => {
    expect(validateEditService(edit({ displayName: ' ' }))).toEqual({ displayName: 'form.errors.displayNameRequired' });
  });

  it('checks the URL of remote services but not of stdio ones', () => {
    expect(validateEditService(edit({ url: 'nope' }))).toEqual({ url: 'form.errors.urlInvalid' });
    expect(validateEditService(edit({ type: 'stdio', url: '' }))).toEqual({});
  });
});
