import { describe, expect, it } from 'vitest';
import { filledUrl, misplacedUrlVariable } from './plan.js';

describe('MCP Registry URL templates filled with their variables', () => {
  const TEMPLATE = 'https://{user}@{tenant}-api.example.com:{port}/v1/{path}?team={team}';
  const NAMES = ['user', 'tenant', 'port', 'path', 'team'];
  const good = { user: 'me', tenant: 'acme', port: '8443', path: 'a b/c', team: 'x&y' };

  it('puts host and port values as they are, and URI-encodes the rest', () => {
    expect(misplacedUrlVariable(TEMPLATE, NAMES, good)).toBeUndefined();
    expect(filledUrl(TEMPLATE, NAMES, good)).toBe('https://me@acme-api.example.com:8443/v1/a%20b%2Fc?team=x%26y');
    expect(filledUrl('https://{tenant}.example.com/mcp', ['tenant'], { tenant: 'münchen' })).toBe('https://münchen.example.com/mcp');
    expect(new URL(filledUrl('https://{tenant}.example.com/mcp', ['tenant'], { tenant: 'münchen' }) as string).host).toBe(
      'xn--mnchen-3ya.example.com',
    );
  });

  it('names the first value that cannot go where it sits: a host name, or a port', () => {
    for (const tenant of ['a/b', 'a@b', 'a:b', 'a b', 'a?b', 'a#b', 'a%2Fb', '..', '.acme']) {
      expect(misplacedUrlVariable(TEMPLATE, NAMES, { ...good, tenant }), tenant).toEqual({ name: 'tenant', part: 'host' });
    }
    for (const port of ['http', '0', '65536', '80/x']) {
      expect(misplacedUrlVariable(TEMPLATE, NAMES, { ...good, port }), port).toEqual({ name: 'port', part: 'port' });
    }
    // The user info, path and query take anything: it is encoded.
    expect(misplacedUrlVariable(TEMPLATE, NAMES, { ...good, user: 'a:b@c', path: '../x?y', team: '#' })).toBeUndefined();
    // A placeholder the entry does not declare is not the variables' concern; nor is one without a value.
    expect(misplacedUrlVariable(TEMPLATE, ['path'], { ...good, tenant: 'a/b' })).toBeUndefined();
    expect(misplacedUrlVariable(TEMPLATE, NAMES, { ...good, tenant: '' })).toBeUndefined();
  });
});
