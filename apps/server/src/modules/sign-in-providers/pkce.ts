import { createHash } from 'node:crypto';
import { randomToken } from '../../infra/secrets.js';

/**
 * PKCE (RFC 7636) with S256: the verifier stays on the server, the provider only sees its hash, so
 * a code stolen from the return address cannot be exchanged by anyone else.
 */

/** 43 characters of the unreserved alphabet, the shortest verifier the RFC allows, 256 bits. */
export const createCodeVerifier = (): string => randomToken(32);

export const codeChallengeOf = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');
