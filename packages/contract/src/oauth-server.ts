import { z } from 'zod';

/**
 * Toolport as the OAuth 2.1 authorization server of its MCP endpoints: what the console's consent
 * page, the Connected apps card and the Users page exchange with the server. The protocol endpoints
 * themselves (`/oauth2/*`, `/.well-known/*`) speak the OAuth wire format, not this envelope.
 */

export const ConsentParams = z.object({ id: z.string().min(1).max(200) });
export type ConsentParams = z.infer<typeof ConsentParams>;

export const ConsentEndpoint = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('all') }),
  z.object({ kind: z.enum(['proxy', 'group']), name: z.string() }),
]);
export type ConsentEndpoint = z.infer<typeof ConsentEndpoint>;

export const ConsentRequest = z.object({
  client_id: z.string(),
  client_name: z.string(),
  /** Where the browser is sent after Allow or Deny: the host the user should recognise. */
  redirect_host: z.string(),
  logo_uri: z.string(),
  resource: z.string(),
  endpoint: ConsentEndpoint,
  /** False when the caller may not use the endpoint: only Deny is offered. */
  allowed: z.boolean(),
  /**
   * Why not, when `allowed` is false: the endpoint does not exist or is disabled (`unknown_endpoint`), or its
   * access list (or a restricted group's) does not include the caller (`no_access`).
   */
  refusal: z.enum(['unknown_endpoint', 'no_access']).optional(),
});
export type ConsentRequest = z.infer<typeof ConsentRequest>;

export const ConsentDecision = z.object({ allow: z.boolean() });
export type ConsentDecision = z.infer<typeof ConsentDecision>;

export const ConsentOutcome = z.object({ redirect_to: z.string() });
export type ConsentOutcome = z.infer<typeof ConsentOutcome>;

/**
 * One client as its user knows it (same name, same redirect URIs, same endpoint): the approvals of each of its
 * registrations as one row. Revoking it ends every token of every one of them.
 */
export const ConnectedApp = z.object({
  id: z.number().int(),
  client_id: z.string(),
  client_name: z.string(),
  resource: z.string(),
  /** Milliseconds since the epoch. */
  approved_at: z.number(),
  last_used_at: z.number().nullable(),
  /** How many approvals (registrations of the same client) the row stands for. */
  grant_count: z.number().int(),
});
export type ConnectedApp = z.infer<typeof ConnectedApp>;

export const GrantIdParams = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .max(2 ** 31 - 1),
});
export type GrantIdParams = z.infer<typeof GrantIdParams>;

export const UserGrantParams = z.object({
  userId: z.coerce
    .number()
    .int()
    .positive()
    .max(2 ** 31 - 1),
  id: z.coerce
    .number()
    .int()
    .positive()
    .max(2 ** 31 - 1),
});
export type UserGrantParams = z.infer<typeof UserGrantParams>;

export const UserGrantsParams = z.object({
  userId: z.coerce
    .number()
    .int()
    .positive()
    .max(2 ** 31 - 1),
});
export type UserGrantsParams = z.infer<typeof UserGrantsParams>;
