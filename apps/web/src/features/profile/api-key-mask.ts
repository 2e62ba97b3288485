/** API key mask of docs/console.md §9: 8 leading and 4 trailing characters show, dots in between. */
export const MASK_HEAD = 8;
export const MASK_TAIL = 4;
const DOTS = '••••••••';

export function maskApiKey(key: string): string {
  // A key this short would be shown whole by the rule; hide all of it instead.
  if (key.length <= MASK_HEAD + MASK_TAIL) return '•'.repeat(key.length);
  return `${key.slice(0, MASK_HEAD)}${DOTS}${key.slice(-MASK_TAIL)}`;
}
