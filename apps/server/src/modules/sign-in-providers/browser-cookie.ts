import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The nonce that ties a sign-in to the browser that began it (login CSRF, RFC 6749 §10.12): the
 * return is accepted only with the cookie set when the flow started. Scoped to the OAuth API
 * paths, invisible to scripts, and sent on the console's same-origin calls and top-level returns.
 */
/** `provider` is `github`, `google` or `oidc_{slug}`. */
const cookieName = (provider: string) => `toolport_oauth_${provider}`;
const COOKIE_PATH = '/api/oauth';

export function readBrowserNonce(req: FastifyRequest, provider: string): string | undefined {
  const name = cookieName(provider);
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

export function setBrowserNonce(req: FastifyRequest, reply: FastifyReply, provider: string, nonce: string, maxAgeSeconds: number): void {
  reply.header('set-cookie', cookie(req, provider, nonce, maxAgeSeconds));
}

export function clearBrowserNonce(req: FastifyRequest, reply: FastifyReply, provider: string): void {
  reply.header('set-cookie', cookie(req, provider, '', 0));
}

function cookie(req: FastifyRequest, provider: string, value: string, maxAgeSeconds: number): string {
  const secure = req.protocol === 'https' ? '; Secure' : '';
  return `${cookieName(provider)}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
}
