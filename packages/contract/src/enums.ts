import { z } from 'zod';

/** Role numbers as the console spec defines them (section 6). */
export const Role = { User: 1, Admin: 10, SuperAdmin: 100 } as const;
export type Role = (typeof Role)[keyof typeof Role];
export const isAdminRole = (role: number): boolean => role >= Role.Admin;

/** User status: 1 enabled, 2 disabled. */
export const UserStatus = { Enabled: 1, Disabled: 2 } as const;
export type UserStatus = (typeof UserStatus)[keyof typeof UserStatus];

export const serviceTypes = ['stdio', 'sse', 'streamableHttp'] as const;
export const ServiceType = z.enum(serviceTypes);
export type ServiceType = z.infer<typeof ServiceType>;

export const StartupStrategy = z.enum(['boot', 'demand']);
export type StartupStrategy = z.infer<typeof StartupStrategy>;

export const LoginMethod = z.enum(['password', 'github', 'google', 'wechat']);
export type LoginMethod = z.infer<typeof LoginMethod>;

export const OAuthProvider = z.enum(['github', 'google']);
export type OAuthProvider = z.infer<typeof OAuthProvider>;
