import { z } from 'zod';
import { TokenPair } from './auth.js';
import { OAuthProvider } from './enums.js';

/** A query switch written as `1`/`0` or `true`/`false`. */
const flag = z.enum(['1', '0', 'true', 'false']).optional();

/**
 * `GET /oauth/{provider}/authorize`: `redirect=1` answers 302 instead of `{url}`; `bind=1` (with the
 * caller's bearer token) links the provider to the signed-in account instead of signing in.
 */
export const OAuthAuthorizeQuery = z.object({ redirect: flag, bind: flag });
export type OAuthAuthorizeQuery = z.infer<typeof OAuthAuthorizeQuery>;

export const OAuthAuthorizeResult = z.object({ url: z.string() });
export type OAuthAuthorizeResult = z.infer<typeof OAuthAuthorizeResult>;

/**
 * What the provider appends to the return address. Providers add more (Google: scope, authuser,
 * prompt); unknown parameters are ignored. A `code_verifier` sent by old consoles is ignored too:
 * the server keeps the verifier itself.
 */
export const OAuthCallbackQuery = z.object({
  code: z.string().max(2048).optional(),
  state: z.string().max(512).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
});
export type OAuthCallbackQuery = z.infer<typeof OAuthCallbackQuery>;

/** The callback answers like sign-in; `mode` tells the console whether a provider was just linked. */
export const OAuthCallbackResult = TokenPair.extend({ mode: z.enum(['login', 'bind']) });
export type OAuthCallbackResult = z.infer<typeof OAuthCallbackResult>;

export const BindingParams = z.object({ provider: OAuthProvider });
export type BindingParams = z.infer<typeof BindingParams>;

/** The providers' names as people write them, in messages and the API docs. */
export const oauthProviderLabels: Record<OAuthProvider, string> = { github: 'GitHub', google: 'Google' };
