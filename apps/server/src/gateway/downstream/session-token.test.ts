import { describe, expect, it } from 'vitest';
import { Secrets } from '../../infra/secrets.js';
import { mintSessionId, newNonce, readSessionId, type SessionClaims } from './session-token.js';

const secrets = new Secrets('one-master-secret-long-enough-for-tests-0123');
const claims: SessionClaims = { userId: 12, serviceId: 3, protocolVersion: '2025-06-18', issuedAt: 1_763_000_000_000, nonce: newNonce() };

describe('signed session ids', () => {
  it('carry their claims and read back only with the key that signed them', () => {
    const id = mintSessionId(secrets, claims);
    expect(id).toMatch(/^[\x21-\x7e]+$/);
    expect(readSessionId(secrets, id)).toEqual(claims);
    expect(readSessionId(new Secrets('another-master-secret-long-enough-0123456'), id)).toBeUndefined();
  });

  it('are unique per session even with identical claims otherwise', () => {
    const a = mintSessionId(secrets, { ...claims, nonce: newNonce() });
    const b = mintSessionId(secrets, { ...claims, nonce: newNonce() });
    expect(a).not.toBe(b);
  });

  it('refuse any change to a claim, the signature or the shape', () => {
    const id = mintSessionId(secrets, claims);
    const parts = id.split('.');
    const swap = (index: number, value: string) => parts.map((p, i) => (i === index ? value : p)).join('.');
    expect(readSessionId(secrets, swap(1, '13'))).toBeUndefined();
    expect(readSessionId(secrets, swap(2, '4'))).toBeUndefined();
    expect(readSessionId(secrets, swap(3, '2025-03-26'))).toBeUndefined();
    expect(readSessionId(secrets, swap(4, String(claims.issuedAt + 1)))).toBeUndefined();
    // A different last character (the signature may already end in 'A'; 'Q' differs in the bits the last character carries).
    const sig = parts[6] ?? '';
    expect(readSessionId(secrets, swap(6, `${sig.slice(0, -1)}${sig.endsWith('A') ? 'Q' : 'A'}`))).toBeUndefined();
    expect(readSessionId(secrets, `${id}.extra`)).toBeUndefined();
    expect(readSessionId(secrets, 'not-a-session')).toBeUndefined();
    expect(readSessionId(secrets, '')).toBeUndefined();
  });
});
