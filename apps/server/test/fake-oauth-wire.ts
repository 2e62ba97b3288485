import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The shapes fake-oauth.ts speaks: the providers' user objects, their error bodies, and how an
 * answer is written. Taken from GitHub's REST and OAuth app docs and Google's OAuth 2.0 / OpenID
 * Connect docs.
 */

export interface FakeGitHubUser {
  id: number;
  login: string;
  name: string | null;
  /** The public profile address (null when the user keeps it private). */
  email: string | null;
  avatar_url: string;
  emails: { email: string; primary: boolean; verified: boolean; visibility: 'public' | 'private' | null }[];
}

export interface FakeGoogleUser {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  picture: string;
}

export const defaultGitHubUser = (): FakeGitHubUser => ({
  id: 583231,
  login: 'octocat',
  name: 'The Octocat',
  email: null,
  avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4',
  emails: [
    { email: 'octocat@users.noreply.github.com', primary: false, verified: true, visibility: null },
    { email: 'octocat@example.com', primary: true, verified: true, visibility: 'private' },
  ],
});

export const defaultGoogleUser = (): FakeGoogleUser => ({
  sub: '110169484474386276334',
  email: 'ada.lovelace@example.com',
  email_verified: true,
  name: 'Ada Lovelace',
  picture: 'https://lh3.googleusercontent.com/a/fake-picture',
});

/** What a fake endpoint answers: JSON (the default), a form-encoded body, or a redirect. */
export type Answer =
  | { status: number; json: unknown; headers?: Record<string, string> }
  | { status: number; form: Record<string, string> }
  | { status: 302; location: string };

export const json = (status: number, body: unknown, headers?: Record<string, string>): Answer => ({ status, json: body, headers });

export function write(res: ServerResponse, answer: Answer): void {
  if ('location' in answer) {
    res.writeHead(302, { location: answer.location });
    res.end();
  } else if ('form' in answer) {
    res.writeHead(answer.status, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
    res.end(new URLSearchParams(answer.form).toString());
  } else {
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
    res.end(JSON.stringify(answer.json));
  }
}

/** A POST body as fields: providers take form-encoded bodies, GitHub JSON too. */
export async function readBody(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  if ((req.headers['content-type'] ?? '').includes('application/json')) {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  }
  return Object.fromEntries(new URLSearchParams(text));
}

const GITHUB_DOCS = 'https://docs.github.com/rest';

export const githubApiError = (status: 401 | 404, message: string): Answer =>
  json(status, { message, documentation_url: GITHUB_DOCS, status: String(status) });

/** GET /user as the REST API answers it (the fields a sign-in reads, and a few more). */
export const githubUserJson = (user: FakeGitHubUser) => ({
  login: user.login,
  id: user.id,
  node_id: `MDQ6VXNlcj${user.id}`,
  avatar_url: user.avatar_url,
  type: 'User',
  site_admin: false,
  name: user.name,
  email: user.email,
});

/** The OpenID userinfo document. */
export function googleUserinfoJson(user: FakeGoogleUser) {
  const [given = '', ...family] = user.name.split(' ');
  return {
    sub: user.sub,
    name: user.name,
    given_name: given,
    family_name: family.join(' '),
    picture: user.picture,
    email: user.email,
    email_verified: user.email_verified,
  };
}

/** Google's id_token is a signed JWT; this one is shaped like it but its signature checks nothing. */
export function fakeIdToken(user: FakeGoogleUser, clientId: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: 'https://accounts.google.com',
    aud: clientId,
    sub: user.sub,
    email: user.email,
    email_verified: user.email_verified,
    iat: now,
    exp: now + 3600,
  };
  return `${part({ alg: 'RS256', kid: 'fake-oauth', typ: 'JWT' })}.${part(claims)}.${Buffer.from('not-a-signature').toString('base64url')}`;
}

/** Why a code cannot be exchanged, in each provider's words. */
export const refusals = {
  github: {
    client: { error: 'incorrect_client_credentials', description: 'The client_id and/or client_secret passed are incorrect.' },
    code: { error: 'bad_verification_code', description: 'The code passed is incorrect or expired.' },
    redirect: {
      error: 'redirect_uri_mismatch',
      description: 'The redirect_uri MUST match the registered callback URL for this application.',
    },
    // GitHub answers a failed PKCE check like any other unusable code.
    verifier: { error: 'bad_verification_code', description: 'The code passed is incorrect or expired.' },
  },
  google: {
    client: { error: 'invalid_client', description: 'Unauthorized' },
    code: { error: 'invalid_grant', description: 'Bad Request' },
    redirect: { error: 'redirect_uri_mismatch', description: 'Bad Request' },
    verifier: { error: 'invalid_grant', description: 'Invalid code verifier.' },
  },
} as const;
export type Refusal = (typeof refusals)[keyof typeof refusals][keyof (typeof refusals)['github']];
