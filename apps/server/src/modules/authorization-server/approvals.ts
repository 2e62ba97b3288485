import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * "This browser's user approved this client with this redirect URI": what makes a redirect URI trusted
 * at the authorization endpoint besides an admin's registration (decision 0041). The endpoint is a plain
 * browser navigation without the console's token, so the fact travels in a cookie the Allow answer sets,
 * one per client and redirect URI: named after a hash of the pair, holding the grant it came from and a
 * MAC under a key of its own (derived from the OAuth token key); HttpOnly, SameSite=Lax (sent on the
 * client's top-level redirect to the authorization endpoint), Path=/oauth2/authorize (sent nowhere else).
 * The grant must still be in force when the cookie is read.
 */
const PREFIX = 'toolport_oauth_approved_';
const MAX_AGE_S = 365 * 24 * 60 * 60;

/** A loopback http redirect matches on any port (RFC 8252 §7.3), so its approval does too. */
function normalisedRedirect(uri: string): string {
  try {
    const url = new URL(uri);
    if (url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname)) {
      url.port = '';
      return url.href;
    }
  } catch {
    // Not a URL: compared as given.
  }
  return uri;
}

const pairOf = (clientId: string, redirectUri: string): string =>
  createHash('sha256')
    .update(`${clientId}\n${normalisedRedirect(redirectUri)}`)
    .digest('base64url')
    .slice(0, 22);

export class ApprovalsCookie {
  private readonly key: Buffer;

  constructor(tokenKey: Uint8Array) {
    this.key = createHmac('sha256', tokenKey).update('toolport oauth approvals cookie').digest();
  }

  /** The grant a Cookie header names for this client and redirect URI; undefined when none, forged or damaged. */
  grantFor(cookieHeader: string | undefined, clientId: string, redirectUri: string): number | undefined {
    const name = `${PREFIX}${pairOf(clientId, redirectUri)}=`;
    const raw = cookieHeader
      ?.split(';')
      .map((c) => c.trim())
      .find((c) => c.startsWith(name))
      ?.slice(name.length);
    const m = raw ? /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(raw) : null;
    if (!m?.[1] || !m[2]) return undefined;
    const given = Buffer.from(m[2], 'base64url');
    const expected = this.mac(clientId, redirectUri, m[1]);
    return given.length === expected.length && timingSafeEqual(given, expected) ? Number(m[1]) : undefined;
  }

  /** The Set-Cookie value that remembers `grantId` for this client and redirect URI. */
  cookie(clientId: string, redirectUri: string, grantId: number, secure: boolean): string {
    const value = `${grantId}.${this.mac(clientId, redirectUri, String(grantId)).toString('base64url')}`;
    const name = `${PREFIX}${pairOf(clientId, redirectUri)}`;
    return `${name}=${value}; Path=/oauth2/authorize; Max-Age=${MAX_AGE_S}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  }

  private mac(clientId: string, redirectUri: string, grantId: string): Buffer {
    return createHmac('sha256', this.key)
      .update(`${pairOf(clientId, redirectUri)}\n${grantId}`)
      .digest();
  }
}
