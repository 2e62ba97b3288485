import { z } from 'zod';

/** `openapi`: a REST API described by an OpenAPI document, its operations as tools (docs/openapi.md). */
export const serviceTypes = ['stdio', 'sse', 'streamableHttp', 'openapi'] as const;
export const ServiceType = z.enum(serviceTypes);
export type ServiceType = z.infer<typeof ServiceType>;

export const StartupStrategy = z.enum(['boot', 'demand']);
export type StartupStrategy = z.infer<typeof StartupStrategy>;

export const LoginMethod = z.enum(['password', 'github', 'google', 'wechat']);
export type LoginMethod = z.infer<typeof LoginMethod>;

export const OAuthProvider = z.enum(['github', 'google']);
export type OAuthProvider = z.infer<typeof OAuthProvider>;
