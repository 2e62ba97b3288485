import {
  ChangePasswordRequest,
  CreateUserRequest,
  EditUserRequest,
  envelope,
  ManageUserRequest,
  OkEnvelope,
  PublicUser,
  SelfUser,
  UpdateSelfRequest,
  USERS_TOTAL_HEADER,
  UserIdParams,
  UserList,
  UserListQuery,
  UserSearchQuery,
} from '@toolport/contract';
import { z } from 'zod';
import type { ZodApi } from '../../http/api.js';
import { principalOf } from '../../http/guard.js';
import { ok } from '../../http/locale.js';
import type { UsersService } from './service.js';

const tags = ['users'];

/** The caller's own account (any signed-in user) and user administration (admins). */
export async function userRoutes(api: ZodApi, users: UsersService): Promise<void> {
  api.get(
    '/user/self',
    {
      config: { auth: 'user' },
      schema: { tags, summary: 'The caller’s profile, with their own API key', response: { 200: envelope(SelfUser) } },
    },
    async (req, reply) => ok(reply, await users.self(principalOf(req).id)),
  );

  api.put(
    '/user/self',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Edit the caller’s username, email and display name (password users only)',
        body: UpdateSelfRequest,
        response: { 200: envelope(PublicUser) },
      },
    },
    async (req, reply) => ok(reply, await users.updateSelf(principalOf(req).id, req.body), req.t('user.profile_updated')),
  );

  api.post(
    '/user/change-password',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Change the caller’s password; every session of the caller ends',
        body: ChangePasswordRequest,
        response: { 200: OkEnvelope },
      },
    },
    async (req, reply) => {
      await users.changePassword(principalOf(req).id, req.body);
      return ok(reply, undefined, req.t('user.password_changed'));
    },
  );

  // The console rotates with GET; POST is the honest verb for a change and is accepted too.
  api.route({
    method: ['GET', 'POST'],
    url: '/user/token',
    config: { auth: 'user' },
    schema: { tags, summary: 'Replace the caller’s API key and return the new one', response: { 200: envelope(z.string()) } },
    handler: async (req, reply) => ok(reply, await users.rotateApiKey(principalOf(req).id), req.t('user.token_rotated')),
  });

  api.get(
    '/user/',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: `One page of users, newest first (total in the ${USERS_TOTAL_HEADER} header)`,
        querystring: UserListQuery,
        response: { 200: envelope(UserList) },
      },
    },
    async (req, reply) => {
      const { users: page, total } = await users.list(req.query.p);
      reply.header(USERS_TOTAL_HEADER, String(total));
      return ok(reply, page);
    },
  );

  api.get(
    '/user/search',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Users whose username, display name or email contains the keyword, or whose id it is',
        querystring: UserSearchQuery,
        response: { 200: envelope(UserList) },
      },
    },
    async (req, reply) => ok(reply, await users.search(req.query.keyword)),
  );

  api.post(
    '/user',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Create a user of a lower role than the caller',
        body: CreateUserRequest,
        response: { 201: envelope(PublicUser) },
      },
    },
    async (req, reply) => ok(reply, await users.createAs(principalOf(req), req.body), req.t('user.created'), 201),
  );

  api.put(
    '/user',
    {
      config: { auth: 'admin' },
      schema: { tags, summary: 'Edit a user of a lower role, or oneself', body: EditUserRequest, response: { 200: envelope(PublicUser) } },
    },
    async (req, reply) => ok(reply, await users.editAs(principalOf(req), req.body), req.t('user.updated')),
  );

  api.delete(
    '/user/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, summary: 'Delete a user of a lower role', params: UserIdParams, response: { 200: OkEnvelope } },
    },
    async (req, reply) => {
      await users.deleteAs(principalOf(req), req.params.id);
      return ok(reply, undefined, req.t('user.deleted'));
    },
  );

  api.post(
    '/user/manage',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Enable, disable, promote or demote a user',
        body: ManageUserRequest,
        response: { 200: envelope(PublicUser) },
      },
    },
    async (req, reply) => ok(reply, await users.manageAs(principalOf(req), req.body.username, req.body.action), req.t('user.manage_done')),
  );
}
