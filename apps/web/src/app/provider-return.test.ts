import { describe, expect, it } from 'vitest';
import { rememberProviderReturn, takeProviderReturn } from './return-to';

describe('the page a GitHub or Google sign-in returns to', () => {
  it('is the page the user was sent away from (an MCP client’s consent page), once', () => {
    rememberProviderReturn({ from: '/oauth/consent?request=abc' });
    expect(takeProviderReturn()).toBe('/oauth/consent?request=abc');
    expect(takeProviderReturn()).toBe('/');
  });

  it('is never another site, nor the sign-in page', () => {
    for (const from of ['//evil.example/x', 'https://evil.example/', '/\\evil', '/login?x=1']) {
      rememberProviderReturn({ from });
      expect(takeProviderReturn(), from).toBe('/');
    }
    sessionStorage.setItem('toolport.returnAfterProvider', '//evil.example');
    expect(takeProviderReturn()).toBe('/');
  });
});
