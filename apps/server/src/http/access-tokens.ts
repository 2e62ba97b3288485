import { jwtVerify, SignJWT } from 'jose';

// The console's bearer token: the auth module signs it, the guard and the batch progress stream verify it.

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export interface AccessClaims {
  userId: number;
  /** The user's auth_version when the token was issued; a bump revokes every older token. */
  authVersion: number;
}

export async function signAccessToken(key: Uint8Array, claims: AccessClaims, now = Date.now()): Promise<string> {
  return new SignJWT({ av: claims.authVersion })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(claims.userId))
    .setIssuer('toolport')
    .setAudience('toolport-console')
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(now / 1000) + ACCESS_TOKEN_TTL_SECONDS)
    .sign(key);
}

/** The claims of a valid, unexpired access token, or null. */
export async function verifyAccessToken(key: Uint8Array, token: string): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key, { issuer: 'toolport', audience: 'toolport-console', algorithms: ['HS256'] });
    const userId = Number(payload.sub);
    const authVersion = Number(payload.av);
    if (!Number.isInteger(userId) || !Number.isInteger(authVersion)) return null;
    return { userId, authVersion };
  } catch {
    return null;
  }
}
