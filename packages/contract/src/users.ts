import { z } from 'zod';
import { PublicUser } from './auth.js';
import {
  MAX_DISPLAY_NAME_LENGTH,
  MAX_EMAIL_LENGTH,
  MAX_ID,
  MAX_PAGE,
  MAX_PASSWORD_LENGTH,
  MAX_USER_SEARCH_LENGTH,
  MAX_USERNAME_LENGTH,
  MIN_PASSWORD_LENGTH,
} from './limits.js';

const username = z
  .string()
  .trim()
  .min(1)
  .max(MAX_USERNAME_LENGTH)
  .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only');
const displayName = z.string().trim().max(MAX_DISPLAY_NAME_LENGTH);
const email = z.union([z.literal(''), z.email().max(MAX_EMAIL_LENGTH)]);
const password = z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH);
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
  id: z.number().int().positive().max(MAX_ID),
  username: username.optional(),
  display_name: displayName.optional(),
  email: email.optional(),
  password: z.union([z.literal(''), password]).optional(),
});
export type EditUserRequest = z.infer<typeof EditUserRequest>;

export const ManageAction = z.enum(['enable', 'disable', 'promote', 'demote']);
export const ManageUserRequest = z.object({ username: z.string().trim().min(1).max(64), action: ManageAction });
export type ManageUserRequest = z.infer<typeof ManageUserRequest>;

export const UserListQuery = z.object({ p: z.coerce.number().int().min(0).max(MAX_PAGE).default(0) });
export const UserSearchQuery = z.object({ keyword: z.string().trim().max(MAX_USER_SEARCH_LENGTH).default('') });
export const UserIdParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });

/** `GET /user/?p=` and `GET /user/search` answer `data` = an array, as the console reads it. */
export const UserList = z.array(PublicUser);
export type UserList = z.infer<typeof UserList>;

/** The list's `data` is a bare array, so the number of users travels in this response header. */
export const USERS_TOTAL_HEADER = 'x-total-count';
