import { randomToken, type Secrets, sha256 } from '../../infra/secrets.js';

/** Prefix so a leaked key is recognisable by secret scanners and people alike. */
export const API_KEY_PREFIX = 'tpk_';

export interface IssuedApiKey {
  plain: string;
  hash: string;
  encrypted: string;
}

/** A new API key: the hash finds its user, the encrypted copy lets its owner see it again. */
export function issueApiKey(secrets: Secrets): IssuedApiKey {
  const plain = `${API_KEY_PREFIX}${randomToken(30)}`;
  return { plain, hash: sha256(plain), encrypted: secrets.encrypt(plain) };
}

export const hashApiKey = (plain: string): string => sha256(plain);
