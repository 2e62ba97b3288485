import type { FastifyRequest } from 'fastify';
import type { Secrets } from '../../infra/secrets.js';
import type { ServiceSpec } from '../catalog.js';
import type { AbuseGuard } from './abuse.js';
import type { Dispatcher } from './dispatcher.js';
import type { LegacyRelay } from './legacy-relay.js';
import type { OriginPolicy } from './origin-policy.js';
import type { ProxyAuth } from './proxy-auth.js';
import type { SessionAccess } from './session-access.js';
import type { SessionRegistry } from './session-registry.js';

export interface ProxyDeps {
  /** Host and Origin rules and the CORS answers of the MCP endpoints. */
  origins: OriginPolicy;
  /** Who calls, for which service (or, on a group's face, which group: group-face.ts). */
  auth: Pick<ProxyAuth, 'resolve'>;
  access: SessionAccess;
  sessions: SessionRegistry;
  dispatcher: Pick<Dispatcher, 'dispatch' | 'initialize' | 'attach'>;
  secrets: Secrets;
  /** Abuse limits: calls in flight, new sessions, refused authentications, slow readers, slow bodies. */
  abuse: AbuseGuard;
  /** Several replicas (REDIS_URL): legacy SSE POSTs forwarded to the replica holding the stream. */
  legacyRelay?: LegacyRelay;
  /** How the replica holding a legacy stream finds what a forwarded POST is for (default: the service by id). */
  relayLookup?: (serviceId: number) => Promise<ServiceSpec | undefined>;
  /** Where the routes are mounted: `/proxy` (default) or `/group` (the legacy transport's message URL). */
  prefix?: '/proxy' | '/group';
}

/** A request on a proxy route: the service name in the path, the legacy session id in the query. */
export type ProxyRequest = FastifyRequest<{ Params: { name: string }; Querystring: { sessionId?: string } }>;
