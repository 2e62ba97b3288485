import { z } from 'zod';

/**
 * Issue 17: groups (one endpoint for many services), tool overrides per service and access lists.
 * Deeper rules (unknown services and tools, collisions, names taken) are checked by the server,
 * which answers a localised 400 or 409 for each.
 */

/** Who may use a service or a group: every signed-in user, or only the chosen ones (admins always may). */
export const AccessList = z.object({
  restricted: z.boolean(),
  user_ids: z.array(z.number().int().positive()).max(10_000).default([]),
});
export type AccessList = z.infer<typeof AccessList>;

export const GroupMode = z.enum(['all', 'discovery']);
export type GroupMode = z.infer<typeof GroupMode>;

/** A group's name is its URL: `/group/{name}/mcp`. */
export const GROUP_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** Separators that keep `{service}{separator}{tool}` readable and unambiguous in a URL-safe name. */
export const GROUP_SEPARATOR = /^[A-Za-z0-9_.:-]{1,8}$/;

export const GroupMember = z.object({
  service_id: z.number().int().positive(),
  /** Original tool names; absent: the whole service, with the tools it gains later. */
  tools: z.array(z.string().min(1).max(255)).max(1000).optional(),
});
export type GroupMember = z.infer<typeof GroupMember>;

export const GroupInput = z.object({
  name: z.string().max(64),
  display_name: z.string().max(128).default(''),
  description: z.string().max(2000).default(''),
  mode: GroupMode.default('all'),
  separator: z.string().max(8).default('__'),
  members: z.array(GroupMember).max(200),
  access: AccessList.default({ restricted: false, user_ids: [] }),
});
export type GroupInput = z.infer<typeof GroupInput>;

export const Group = z.object({
  id: z.number().int(),
  name: z.string(),
  display_name: z.string(),
  description: z.string(),
  mode: GroupMode,
  separator: z.string(),
  members: z.array(GroupMember),
  access: AccessList,
  created_at: z.number(),
  updated_at: z.number(),
});
export type Group = z.infer<typeof Group>;

export const GroupIdParams = z.object({ id: z.string().max(32) });

/** One tool of `GET /mcp_services/{id}/tools`: the live list with the overrides applied. */
export const ServiceTool = z.object({
  /** The name clients see (the alias when one is set). */
  name: z.string(),
  original_name: z.string(),
  enabled: z.boolean(),
  /** The description clients see. */
  description: z.string(),
  /** The upstream's own description, for the rename dialog. */
  original_description: z.string(),
  alias: z.string().nullable(),
  input_schema: z.record(z.string(), z.unknown()),
});
export type ServiceTool = z.infer<typeof ServiceTool>;

export const ServiceTools = z.object({
  tools: z.array(ServiceTool),
  /**
   * How many tools the upstream lists now, the ones switched off included (non-admins are not given those):
   * with the enabled ones listed, the "N of M tools enabled" of the dialog and of the service's card.
   */
  total: z.number().int().optional(),
  /** Overrides of tools the upstream does not list now (kept: they apply again if the tool comes back). */
  dormant: z.array(z.string()),
});
export type ServiceTools = z.infer<typeof ServiceTools>;

export const ToolParams = z.object({ id: z.string().max(32), original_name: z.string().min(1).max(255) });

/** Try it: one call of a tool through the gateway as the signed-in user. */
export const ToolCallRequest = z.object({ arguments: z.record(z.string(), z.unknown()).default({}) });
export type ToolCallRequest = z.infer<typeof ToolCallRequest>;

export const ToolCallResult = z.object({
  is_error: z.boolean(),
  /** The tool's content blocks as it returned them: text, image, audio, resource, resource_link. */
  content: z.array(z.record(z.string(), z.unknown())),
  structured_content: z.unknown().optional(),
  /** Milliseconds from the request to the answer, measured by the server. */
  duration_ms: z.number(),
});
export type ToolCallResult = z.infer<typeof ToolCallResult>;

/** `null` clears an override; an absent field keeps it. */
export const ToolOverrideRequest = z.object({
  enabled: z.boolean().nullable().optional(),
  alias: z.string().max(128).nullable().optional(),
  description: z.string().max(4000).nullable().optional(),
});
export type ToolOverrideRequest = z.infer<typeof ToolOverrideRequest>;
