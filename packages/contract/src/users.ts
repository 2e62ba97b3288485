import { z } from 'zod';
import { PublicUser } from './auth.js';

const username = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only');
const displayName = z.string().trim().max(64);
const email = z.union([z.literal(''), z.email().max(254)]);
const password = z.string().min(8).max(128);
/** Ids are 32-bit integer columns; a larger number is refused as invalid rather than failing in SQL. */
const MAX_USER_ID = 2_147_483_647;

export const UpdateSelfRequest = z.object({
  username: username.optional(),
  display_name: displayName.optional(),
  email: email.optional(),
});
export type UpdateSelfRequest = z.infer<typeof UpdateSelfRequest>;

export const ChangePasswordRequest = z.object({
  current_password: z.string().min(1).max(256),
  new_password: password,
});
export type ChangePasswordRequest = z.infer<typeof ChangePasswordRequest>;

export const CreateUserRequest = z.object({
  username,
  display_name: displayName.optional().default(''),
  password,
  email: email.optional().default(''),
  role: z
    .union([z.literal(1), z.literal(10)])
    .optional()
    .default(1),
});
export type CreateUserRequest = z.infer<typeof CreateUserRequest>;

export const EditUserRequest = z.object({
  id: z.number().int().positive().max(MAX_USER_ID),
  username: username.optional(),
  display_name: displayName.optional(),
  email: email.optional(),
  password: z.union([z.literal(''), password]).optional(),
});
export type EditUserRequest = z.infer<typeof EditUserRequest>;

export const ManageAction = z.enum(['enable', 'disable', 'promote', 'demote']);
export const ManageUserRequest = z.object({ username: z.string().trim().min(1).max(64), action: ManageAction });
export type ManageUserRequest = z.infer<typeof ManageUserRequest>;

export const UserListQuery = z.object({ p: z.coerce.number().int().min(0).max(1_000_000).default(0) });
export const UserSearchQuery = z.object({ keyword: z.string().trim().max(100).default('') });
export const UserIdParams = z.object({ id: z.coerce.number().int().positive().max(MAX_USER_ID) });

export const USERS_PAGE_SIZE = 10;
export const USER_SEARCH_LIMIT = 100;

/** `GET /user/?p=` and `GET /user/search` answer `data` = an array, as the console reads it. */
export const UserList = z.array(PublicUser);
export type UserList = z.infer<typeof UserList>;

/** The list's `data` is a bare array, so the number of users travels in this response header. */
export const USERS_TOTAL_HEADER = 'x-total-count';
