import { describe, expect, it } from 'vitest';
import { maskedLines } from './secret-lines';

describe('masked KEY=VALUE lines', () => {
  it('keeps the names and hides every value, whatever it contains', () => {
    expect(maskedLines('API_KEY=s3cr3t=x==\nMODE=fast')).toBe('API_KEY=••••••••\nMODE=••••••••');
  });

  it('leaves lines without a value as they are, so an empty field is not masked', () => {
    expect(maskedLines('')).toBe('');
    expect(maskedLines('NAME=\nnot a pair')).toBe('NAME=\nnot a pair');
  });
});
