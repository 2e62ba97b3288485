import { z } from 'zod';
import { LoginMethod } from './enums.js';

export const LoginRequest = z.object({
  username: z.string().trim().min(1).max(64),
  password: z.string().min(1).max(256),
});
export type LoginRequest = z.infer<typeof LoginRequest>;

export const RefreshRequest = z.object({ refresh_token: z.string().min(1).max(512) });
export type RefreshRequest = z.infer<typeof RefreshRequest>;

export const LogoutRequest = z.object({ refresh_token: z.string().min(1).max(512).optional() });

/** A user as any signed-in caller may see it: never a password hash, never an API key. */
export const PublicUser = z.object({
  id: z.number().int(),
  username: z.string(),
  display_name: z.string(),
  email: z.string(),
  role: z.number().int(),
  status: z.number().int(),
  github_id: z.string(),
  google_id: z.string(),
  wechat_id: z.string(),
  login_method: LoginMethod,
  created_at: z.number().int(),
});
export type PublicUser = z.infer<typeof PublicUser>;

/** The caller's own profile: adds the caller's API key. */
export const SelfUser = PublicUser.extend({ token: z.string() });
export type SelfUser = z.infer<typeof SelfUser>;

export const TokenPair = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  expires_in: z.number().int(),
  user: PublicUser,
});
export type TokenPair = z.infer<typeof TokenPair>;
