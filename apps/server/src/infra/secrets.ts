import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Keys derived from the one master secret (docs/architecture.md §1): an AES-256-GCM key for values at rest,
 * an HMAC key for access tokens, one for gateway session ids and one for the messages replicas send each
 * other. Separate keys so that one use can never be mistaken for another.
 */
export class Secrets {
  private readonly encKey: Buffer;
  readonly jwtKey: Uint8Array;
  private readonly sessionKey: Buffer;
  /** Signs the messages replicas send each other over Redis (infra/redis.ts). */
  readonly replicaKey: Buffer;
  /** Signs the access tokens Toolport issues to MCP clients as their OAuth server (modules/authorization-server). */
  readonly mcpTokenKey: Uint8Array;

  constructor(master: string) {
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', master, 'toolport', info, 32));
    this.encKey = derive('encryption');
    this.jwtKey = new Uint8Array(derive('jwt'));
    this.sessionKey = derive('session');
    this.replicaKey = derive('replica-messages');
    this.mcpTokenKey = new Uint8Array(derive('mcp-access-tokens'));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not an encrypted value');
    const decipher = createDecipheriv('aes-256-gcm', this.encKey, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  encryptJson(value: unknown): string {
    return this.encrypt(JSON.stringify(value));
  }

  decryptJson<T>(sealed: string | null | undefined, fallback: T): T {
    if (!sealed) return fallback;
    return JSON.parse(this.decrypt(sealed)) as T;
  }

  signSession(payload: string): string {
    return createHmac('sha256', this.sessionKey).update(payload).digest('base64url');
  }

  verifySession(payload: string, signature: string): boolean {
    const expected = Buffer.from(this.signSession(payload));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** A random URL-safe token with `bytes` bytes of entropy. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** SECRET_KEY from the environment, else the one generated once into DATA_DIR/secret.key (mode 600). */
/** Where the master secret is, as the server reads it (SECRET_KEY, else DATA_DIR/secret.key), and what it is. */
export interface StoredMasterSecret {
  secret: string;
  /** DATA_DIR/secret.key when the secret is the generated file; undefined when it is SECRET_KEY. */
  file: string | undefined;
}

/** The master secret as the server would read it, never generated: undefined when neither SECRET_KEY nor the file is there. */
export function storedMasterSecret(configured: string | undefined, dataDir: string): StoredMasterSecret | undefined {
  if (configured) return { secret: configured, file: undefined };
  const file = path.join(dataDir, 'secret.key');
  return existsSync(file) ? { secret: readFileSync(file, 'utf8').trim(), file } : undefined;
}

export function resolveMasterSecret(configured: string | undefined, dataDir: string): string {
  const stored = storedMasterSecret(configured, dataDir);
  if (stored) return stored.secret;
  const file = path.join(dataDir, 'secret.key');
  const generated = randomBytes(48).toString('base64url');
  try {
    writeFileSync(file, `${generated}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process sharing DATA_DIR won the race: use its key.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
  chmodSync(file, 0o600);
  return generated;
}
