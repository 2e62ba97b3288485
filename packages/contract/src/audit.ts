import { z } from 'zod';
import { AUDIT_MAX_PAGE_SIZE, AUDIT_PAGE_SIZE, MAX_AUDIT_FILTER_LENGTH, MAX_PAGE } from './limits.js';

/** What an audit entry is about (docs/security.md, "Audit trail"). */
export const auditObjectTypes = [
  'service',
  'group',
  'tool',
  'access',
  'user',
  'option',
  'oauth_client',
  'oauth_grant',
  'upstream_oauth',
  'import',
  'export',
  'backup',
  'secret',
  'session',
] as const;
export const AuditObjectType = z.enum(auditObjectTypes);
export type AuditObjectType = z.infer<typeof AuditObjectType>;

/**
 * Who made the change: a signed-in user (the console and `/api` take the access token sign-in issues; API keys
 * open only the MCP endpoints, which change nothing), the `toolport` command, or nobody known (a refused sign-in).
 */
export const auditActorTypes = ['user', 'cli', 'anonymous'] as const;
export const AuditActorType = z.enum(auditActorTypes);
export type AuditActorType = z.infer<typeof AuditActorType>;

/** `ok`; `failed` for an administrator's request answered with an error; `refused` for a sign-in not let in. */
export const AuditOutcome = z.enum(['ok', 'failed', 'refused']);
export type AuditOutcome = z.infer<typeof AuditOutcome>;

/**
 * An instant as Unix milliseconds or an ISO 8601 date-time with an offset (`2026-11-28T12:00:00Z`). Anything
 * else is refused (400), never passed on to SQL.
 */
const Instant = z.union([
  z.coerce.number().int().min(0).max(8_640_000_000_000_000),
  z
    .string()
    .datetime({ offset: true })
    .transform((s) => Date.parse(s)),
]);

/** `GET /audit` filters (all optional, combined with AND); paged like `GET /mcp_logs`. */
export const AuditFilter = z.object({
  /** A username (exact), or a user id. */
  actor: z.string().trim().min(1).max(MAX_AUDIT_FILTER_LENGTH).optional(),
  object_type: AuditObjectType.optional(),
  object_id: z.string().trim().min(1).max(MAX_AUDIT_FILTER_LENGTH).optional(),
  /** From this instant on (inclusive). */
  since: Instant.optional(),
  /** Before this instant (exclusive). */
  until: Instant.optional(),
});
export type AuditFilter = z.infer<typeof AuditFilter>;

export const AuditQuery = AuditFilter.extend({
  page: z.coerce.number().int().min(1).max(MAX_PAGE).default(1),
  page_size: z.coerce.number().int().min(1).max(AUDIT_MAX_PAGE_SIZE).default(AUDIT_PAGE_SIZE),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

export const AuditEntry = z.object({
  id: z.number().int(),
  /** Unix milliseconds. */
  created_at: z.number().int(),
  actor_type: AuditActorType,
  actor_id: z.number().int().nullable(),
  actor_name: z.string(),
  /** The client's address; empty for the command line. */
  address: z.string(),
  /** create, update, delete, toggle, sign_in… */
  action: z.string(),
  object_type: AuditObjectType,
  object_id: z.string(),
  outcome: AuditOutcome,
  /** `METHOD /api/path` of the request, or the `toolport` command. */
  via: z.string(),
  /** What was asked: the request's fields or the command's arguments, secrets replaced by `********`. */
  changes: z.record(z.string(), z.unknown()),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditPage = z.object({ entries: z.array(AuditEntry), total: z.number().int(), page: z.number().int() });
export type AuditPage = z.infer<typeof AuditPage>;
