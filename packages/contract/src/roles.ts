/** Role numbers and user statuses, free of zod so the console can import them without loading it. */

/** Role numbers as docs/console.md §6 defines them. */
export const Role = { User: 1, Admin: 10, SuperAdmin: 100 } as const;
export type Role = (typeof Role)[keyof typeof Role];
export const isAdminRole = (role: number): boolean => role >= Role.Admin;

/** User status: 1 enabled, 2 disabled. */
export const UserStatus = { Enabled: 1, Disabled: 2 } as const;
export type UserStatus = (typeof UserStatus)[keyof typeof UserStatus];
