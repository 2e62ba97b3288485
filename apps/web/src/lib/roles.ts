/**
 * Role thresholds of console spec §6, the same numbers as `Role` in @toolport/contract. The console imports
 * only types from the contract: its runtime values build zod schemas, which would pull zod into the bundle.
 */
export const ADMIN_ROLE = 10;
export const SUPER_ADMIN_ROLE = 100;

export const isAdminRole = (role: number): boolean => role >= ADMIN_ROLE;
