import { describe, expect, it } from 'vitest';
import {
  callbackUrl,
  normaliseServerAddress,
  planCredentials,
  providerReadiness,
  SECRET_MASK,
  serverAddressProblem,
} from './preference-rules';

describe('preference rules', () => {
  it('saves the server address trimmed and without trailing slashes', () => {
    expect(normaliseServerAddress('  https://gw.example.com///  ')).toBe('https://gw.example.com');
    expect(normaliseServerAddress('https://gw.example.com/base/')).toBe('https://gw.example.com/base');
    expect(normaliseServerAddress('   ')).toBe('');
  });

  it.each([
    ['', undefined],
    ['https://gw.example.com', undefined],
    ['http://127.0.0.1:3000', undefined],
    ['https://gw.example.com/base', undefined],
    ['gw.example.com', 'serverAddress.errors.invalid'],
    ['javascript:alert(1)', 'serverAddress.errors.scheme'],
    ['ftp://gw.example.com', 'serverAddress.errors.scheme'],
    ['https://gw.example.com?x=1', 'serverAddress.errors.query'],
    ['https://gw.example.com/#', 'serverAddress.errors.query'],
  ])('server address %j → %s', (address, problem) => {
    expect(serverAddressProblem(address)).toBe(problem);
  });

  it('builds the callback URLs of the console return routes', () => {
    expect(callbackUrl('https://gw.example.com', 'github')).toBe('https://gw.example.com/oauth/github');
    expect(callbackUrl('https://gw.example.com/base', 'google')).toBe('https://gw.example.com/base/oauth/google');
  });

  it('a provider is on the sign-in page only when enabled with an ID and a secret', () => {
    expect(providerReadiness({ GitHubOAuthEnabled: 'false', GitHubClientId: 'id', GitHubClientSecret: SECRET_MASK }, 'github')).toBe('off');
    expect(providerReadiness({ GitHubOAuthEnabled: 'true', GitHubClientId: 'id', GitHubClientSecret: '' }, 'github')).toBe('incomplete');
    expect(providerReadiness({ GoogleOAuthEnabled: 'true', GoogleClientId: '', GoogleClientSecret: SECRET_MASK }, 'google')).toBe(
      'incomplete',
    );
    expect(providerReadiness({ GoogleOAuthEnabled: 'true', GoogleClientId: 'id', GoogleClientSecret: SECRET_MASK }, 'google')).toBe(
      'active',
    );
  });

  describe('credentials plan', () => {
    const saved = { GitHubClientId: 'id', GitHubClientSecret: SECRET_MASK, GitHubOAuthEnabled: 'false' };

    it('sends what changed, trimmed, and never the mask', () => {
      expect(planCredentials(saved, 'github', { clientId: ' id2 ', clientSecret: '' })).toEqual({
        ok: true,
        updates: [{ key: 'GitHubClientId', value: 'id2' }],
      });
      expect(planCredentials(saved, 'github', { clientId: 'id', clientSecret: ' new ' })).toEqual({
        ok: true,
        updates: [{ key: 'GitHubClientSecret', value: 'new' }],
      });
      expect(planCredentials(saved, 'github', { clientId: 'id', clientSecret: SECRET_MASK })).toEqual({
        ok: false,
        problem: 'credentials.errors.nothingChanged',
      });
      expect(planCredentials(saved, 'github', { clientId: 'id ', clientSecret: '   ' })).toEqual({
        ok: false,
        problem: 'credentials.errors.nothingChanged',
      });
    });

    it('an enabled provider keeps its client ID; a disabled one may drop it', () => {
      expect(planCredentials({ ...saved, GitHubOAuthEnabled: 'true' }, 'github', { clientId: ' ', clientSecret: '' })).toEqual({
        ok: false,
        problem: 'credentials.errors.idNeededWhileEnabled',
      });
      expect(planCredentials(saved, 'github', { clientId: '', clientSecret: '' })).toEqual({
        ok: true,
        updates: [{ key: 'GitHubClientId', value: '' }],
      });
    });
  });
});
