import { isAdminRole, Role } from '@toolport/contract';

/** Role thresholds of docs/console.md §6. */
export const ADMIN_ROLE = Role.Admin;
export const SUPER_ADMIN_ROLE = Role.SuperAdmin;

export { isAdminRole };
