import { randomBytes } from 'node:crypto';
import type { Secrets } from '../../infra/secrets.js';

/**
 * Streamable HTTP session ids are signed tokens (docs/architecture.md §5), so that any replica can serve a
 * session and a restart breaks no client: the id itself says whose session it is, on which service,
 * at which protocol version and since when. The random nonce makes every id unique and is the
 * session's identity towards the upstream side.
 *
 * Layout: `1.<userId>.<serviceId>.<protocolVersion>.<issuedAt ms>.<nonce>.<hmac>`: visible ASCII
 * only, as the transport requires of session ids.
 */
export interface SessionClaims {
  userId: number;
  serviceId: number;
  protocolVersion: string;
  issuedAt: number;
  nonce: string;
}

const FORMAT = '1';
const VERSION_SHAPE = /^\d{4}-\d{2}-\d{2}$/;
const NONCE_SHAPE = /^[A-Za-z0-9_-]{22}$/;
const INT_SHAPE = /^\d{1,15}$/;

export const newNonce = (): string => randomBytes(16).toString('base64url');

export function mintSessionId(secrets: Secrets, claims: SessionClaims): string {
  const payload = [FORMAT, claims.userId, claims.serviceId, claims.protocolVersion, claims.issuedAt, claims.nonce].join('.');
  return `${payload}.${secrets.signSession(payload)}`;
}

/** The claims of a well-formed id with a valid signature, else undefined (expiry is the caller's rule). */
export function readSessionId(secrets: Secrets, id: string): SessionClaims | undefined {
  if (id.length > 200) return undefined;
  const parts = id.split('.');
  if (parts.length !== 7) return undefined;
  const [format, userId, serviceId, protocolVersion, issuedAt, nonce, signature] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (format !== FORMAT || !INT_SHAPE.test(userId) || !INT_SHAPE.test(serviceId) || !INT_SHAPE.test(issuedAt)) return undefined;
  if (!VERSION_SHAPE.test(protocolVersion) || !NONCE_SHAPE.test(nonce)) return undefined;
  if (!secrets.verifySession(id.slice(0, id.length - signature.length - 1), signature)) return undefined;
  return { userId: Number(userId), serviceId: Number(serviceId), protocolVersion, issuedAt: Number(issuedAt), nonce };
}
