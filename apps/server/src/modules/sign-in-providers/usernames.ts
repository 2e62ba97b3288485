import { randomToken } from '../../infra/secrets.js';

/** The username rules of the API (packages/contract users.ts): 1-32 of letters, digits, _ . - */
const MAX_LENGTH = 32;

/** A username from what the provider calls the person, cut down to the characters usernames allow. */
export function usernameBase(suggestion: string, provider: string): string {
  const cleaned = suggestion
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_.-]/g, '')
    .replace(/^[_.-]+/, '')
    .slice(0, MAX_LENGTH);
  return cleaned || `${provider}_user`;
}

/** Names to try in order: the base, then numbered, then random suffixes when the numbers are taken. */
export function usernameCandidates(base: string): string[] {
  const withSuffix = (suffix: string) => `${base.slice(0, MAX_LENGTH - suffix.length)}${suffix}`;
  const numbered = Array.from({ length: 8 }, (_, i) => withSuffix(`_${i + 2}`));
  const random = Array.from({ length: 3 }, () => withSuffix(`_${randomToken(4).replace(/[^A-Za-z0-9]/g, 'x')}`));
  return [base, ...numbered, ...random];
}
