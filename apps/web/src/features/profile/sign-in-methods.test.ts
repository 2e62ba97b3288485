import { describe, expect, it } from 'vitest';
import { selfUser, statusData } from '../../test/fake-api';
import { isLastSignInMethod, signInMethodCount, visibleProviders } from './sign-in-methods';

describe('sign-in method rules', () => {
  it.each([
    [{}, 1],
    [{ github_id: '1' }, 2],
    [{ login_method: 'github', github_id: '1' }, 1],
    [{ login_method: 'github', github_id: '1', google_id: 'g' }, 2],
    [{ login_method: 'wechat', wechat_id: 'w', google_id: 'g' }, 2],
  ] as const)('%j has %i ways to sign in', (user, count) => {
    expect(signInMethodCount(selfUser(user))).toBe(count);
  });

  it('the only binding of a user without a password is the last method; a password user has none', () => {
    expect(isLastSignInMethod(selfUser({ login_method: 'google', google_id: 'g' }), 'google')).toBe(true);
    expect(isLastSignInMethod(selfUser({ login_method: 'google', google_id: 'g' }), 'github')).toBe(false);
    expect(isLastSignInMethod(selfUser({ login_method: 'wechat', wechat_id: 'w', google_id: 'g' }), 'google')).toBe(false);
    expect(isLastSignInMethod(selfUser({ github_id: '1' }), 'github')).toBe(false);
  });

  it('offers usable providers and keeps bound ones', () => {
    const githubOnly = statusData({ github_oauth: true, github_client_id: 'id', google_oauth: true, google_client_id: '' });
    expect(visibleProviders(githubOnly, selfUser())).toEqual(['github']);
    expect(visibleProviders(githubOnly, selfUser({ google_id: 'g' }))).toEqual(['github', 'google']);
    expect(visibleProviders(undefined, selfUser())).toEqual([]);
  });
});
