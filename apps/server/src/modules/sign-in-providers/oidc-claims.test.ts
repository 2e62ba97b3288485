import { describe, expect, it } from 'vitest';
import { claimAt, claimValues, discoveryUrl } from './oidc.js';

describe('reading the roles claim', () => {
  it('finds a top-level claim, a dotted path into nested objects, and a URL-shaped name as it is', () => {
    const claims = {
      groups: ['a', 'b'],
      realm_access: { roles: ['admin', 'offline_access'] },
      'https://example.com/roles': ['r1'],
      resource_access: { toolport: { roles: 'only-one' } },
    };
    expect(claimAt(claims, 'groups')).toEqual(['a', 'b']);
    expect(claimAt(claims, 'realm_access.roles')).toEqual(['admin', 'offline_access']);
    expect(claimAt(claims, 'https://example.com/roles')).toEqual(['r1']);
    expect(claimAt(claims, 'resource_access.toolport.roles')).toBe('only-one');
    expect(claimAt(claims, 'realm_access.missing')).toBeUndefined();
    expect(claimAt(claims, 'groups.0')).toBeUndefined();
  });

  it('takes a string, or the strings of an array, and nothing else', () => {
    expect(claimValues('admins')).toEqual(['admins']);
    expect(claimValues('')).toEqual([]);
    expect(claimValues(['x', 3, { name: 'y' }, 'z'])).toEqual(['x', 'z']);
    expect(claimValues(undefined)).toBeUndefined();
    expect(claimValues({ admins: true })).toBeUndefined();
  });

  it('finds the discovery document below the issuer, with or without a trailing slash', () => {
    expect(discoveryUrl('https://auth.example.com/application/o/toolport/')).toBe(
      'https://auth.example.com/application/o/toolport/.well-known/openid-configuration',
    );
    expect(discoveryUrl('https://kc.example.com/realms/corp')).toBe('https://kc.example.com/realms/corp/.well-known/openid-configuration');
  });
});
