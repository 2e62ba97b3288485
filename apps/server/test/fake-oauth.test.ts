import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOAuth, startFakeOAuth } from './fake-oauth.js';

/**
 * The fake providers check what the real ones check, so a server that gets PKCE, secrets or
 * single-use codes wrong fails against them as it would in production.
 */
const verifier = 'a-verifier-of-enough-length-0123456789-abcdefghij';
const challenge = createHash('sha256').update(verifier).digest('base64url');
const back = 'http://console.test/oauth/github';

describe('fake GitHub and Google', () => {
  let fake: FakeOAuth;
  beforeAll(async () => {
    fake = await startFakeOAuth();
  });
  afterAll(async () => fake?.close());
  beforeEach(() => fake.reset());

  /** Visits the authorize page like a browser and returns where it sends the browser back to. */
  async function authorize(provider: 'github' | 'google', params: Record<string, string>): Promise<URL> {
    const page = provider === 'github' ? `${fake.env.GITHUB_BASE_URL}/login/oauth/authorize` : fake.env.GOOGLE_AUTH_URL;
    const res = await fetch(`${page}?${new URLSearchParams(params)}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location') ?? '');
  }

  const githubToken = (form: Record<string, string>, accept = 'application/json') =>
    fetch(`${fake.env.GITHUB_BASE_URL}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
  const googleToken = (form: Record<string, string>) =>
    fetch(fake.env.GOOGLE_TOKEN_URL ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', ...form }),
    });

  it('runs GitHub’s web flow: code and state back, a token once, the user and their addresses', async () => {
    const { clientId, clientSecret } = fake.clients.github;
    const returned = await authorize('github', {
      client_id: clientId,
      redirect_uri: back,
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(`${returned.origin}${returned.pathname}`).toBe(back);
    expect(returned.searchParams.get('state')).toBe('s1');
    const code = returned.searchParams.get('code') ?? '';
    const form = { client_id: clientId, client_secret: clientSecret, code, redirect_uri: back, code_verifier: verifier };

    const token = (await (await githubToken(form)).json()) as { access_token: string };
    expect(token).toMatchObject({ token_type: 'bearer', scope: 'user:email' });
    const auth = { authorization: `Bearer ${token.access_token}` };
    expect(await (await fetch(`${fake.env.GITHUB_API_URL}/user`, { headers: auth })).json()).toMatchObject({
      id: 583231,
      login: 'octocat',
    });
    const emails = await (await fetch(`${fake.env.GITHUB_API_URL}/user/emails`, { headers: auth })).json();
    expect(emails).toContainEqual({ email: 'octocat@example.com', primary: true, verified: true, visibility: 'private' });

    const replay = await githubToken(form);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ error: 'bad_verification_code' });
  });

  it('refuses a GitHub code with a wrong PKCE verifier or a wrong secret, and answers form-encoded unless asked for JSON', async () => {
    const { clientId, clientSecret } = fake.clients.github;
    const start = { client_id: clientId, redirect_uri: back, state: 's', code_challenge: challenge, code_challenge_method: 'S256' };
    const code1 = (await authorize('github', start)).searchParams.get('code') ?? '';
    const wrong = await githubToken({ client_id: clientId, client_secret: clientSecret, code: code1, code_verifier: `${verifier}x` });
    expect(await wrong.json()).toMatchObject({ error: 'bad_verification_code' });

    const code2 = (await authorize('github', start)).searchParams.get('code') ?? '';
    const badSecret = await githubToken({ client_id: clientId, client_secret: 'nope', code: code2, code_verifier: verifier }, '*/*');
    expect(badSecret.headers.get('content-type')).toMatch(/x-www-form-urlencoded/);
    expect(new URLSearchParams(await badSecret.text()).get('error')).toBe('incorrect_client_credentials');
  });

  it('runs Google’s flow with PKCE and answers a reused code with invalid_grant', async () => {
    const { clientId, clientSecret } = fake.clients.google;
    const returned = await authorize('google', {
      client_id: clientId,
      redirect_uri: back,
      response_type: 'code',
      scope: 'openid email profile',
      state: 'g1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(returned.searchParams.get('state')).toBe('g1');
    const form = {
      client_id: clientId,
      client_secret: clientSecret,
      code: returned.searchParams.get('code') ?? '',
      redirect_uri: back,
      code_verifier: verifier,
    };
    const ok = await googleToken(form);
    expect(ok.status).toBe(200);
    const token = (await ok.json()) as { access_token: string; id_token: string };
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    expect(token.id_token.split('.')).toHaveLength(3);
    const info = await (
      await fetch(fake.env.GOOGLE_USERINFO_URL ?? '', { headers: { authorization: `Bearer ${token.access_token}` } })
    ).json();
    expect(info).toMatchObject({ sub: '110169484474386276334', email: 'ada.lovelace@example.com', email_verified: true });

    const replay = await googleToken(form);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toEqual({ error: 'invalid_grant', error_description: 'Bad Request' });
  });

  it('refuses a Google code with a wrong PKCE verifier', async () => {
    const { clientId, clientSecret } = fake.clients.google;
    const returned = await authorize('google', {
      client_id: clientId,
      redirect_uri: back,
      response_type: 'code',
      state: 'g',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const res = await googleToken({
      client_id: clientId,
      client_secret: clientSecret,
      code: returned.searchParams.get('code') ?? '',
      redirect_uri: back,
      code_verifier: 'wrong',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_grant', error_description: 'Invalid code verifier.' });
  });

  it('declines once when told to, with the state kept', async () => {
    fake.denyNext('github');
    const declined = await authorize('github', { client_id: fake.clients.github.clientId, redirect_uri: back, state: 'd' });
    expect(declined.searchParams.get('error')).toBe('access_denied');
    expect(declined.searchParams.get('state')).toBe('d');
    expect(declined.searchParams.has('code')).toBe(false);
    const next = await authorize('github', { client_id: fake.clients.github.clientId, redirect_uri: back, state: 'e' });
    expect(next.searchParams.has('code')).toBe(true);
  });

  it('answers the APIs 401 without a valid token, as the real ones do', async () => {
    expect((await fetch(`${fake.env.GITHUB_API_URL}/user`)).status).toBe(401);
    const bad = await fetch(`${fake.env.GITHUB_API_URL}/user`, { headers: { authorization: 'Bearer gho_unknown' } });
    expect(await bad.json()).toMatchObject({ message: 'Bad credentials' });
    expect((await fetch(fake.env.GOOGLE_USERINFO_URL ?? '', { headers: { authorization: 'Bearer ya29.unknown' } })).status).toBe(401);
  });
});
