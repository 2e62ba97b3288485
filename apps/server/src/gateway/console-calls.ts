import { randomUUID } from 'node:crypto';
import { type JSONRPCError, type JSONRPCResponse, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Locale } from '../i18n/index.js';
import { storedText } from '../i18n/localised-error.js';
import type { ServiceCatalog } from './catalog.js';
import { CallScope } from './downstream/call-scope.js';
import type { Dispatcher } from './downstream/dispatcher.js';
import { DownstreamSession } from './downstream/session.js';
import type { HealthResult, UpstreamPool } from './link-api.js';
import type { ListedTool } from './tool-policy.js';
import { errorText } from './upstream/channel.js';
import { describeRoundTrip } from './upstream/handshake.js';
import { UpstreamConnectionMissing } from './upstream-auth.js';

const MAX_TOOL_PAGES = 50;
const LIST_TIMEOUT_MS = 30_000;
const CLIENT_INFO = { name: 'toolport-console', version: '1' };

/**
 * One tools/call as the user, through the proxy's own dispatcher (overrides, in-flight cap, daily limit,
 * metering, the user's link): the console's Try it. Resolves with the JSON-RPC answer.
 */
export async function consoleCall(
  parts: { pool: UpstreamPool; catalog: ServiceCatalog; dispatcher: Pick<Dispatcher, 'dispatch'> },
  serviceId: number,
  userId: number,
  name: string,
  args: Record<string, unknown>,
  locale: Locale = 'en',
): Promise<JSONRPCResponse | JSONRPCError> {
  const service = await parts.catalog.byId(serviceId);
  if (!service?.enabled) throw new Error(`service ${serviceId} is not available`);
  const nonce = `console-${randomUUID()}`;
  const session = new DownstreamSession({
    key: nonce,
    peerId: nonce,
    userId,
    serviceId,
    protocolVersion: LATEST_PROTOCOL_VERSION,
    issuedAt: Date.now(),
    transport: 'streamable',
    initParams: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    revocationCheckedAt: Date.now(),
  });
  const request = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name, arguments: args } };
  try {
    return await new Promise<JSONRPCResponse | JSONRPCError>((resolve) => {
      void parts.dispatcher.dispatch(
        session,
        service,
        [request],
        { notification() {}, response: (json) => resolve(JSON.parse(json) as JSONRPCResponse | JSONRPCError), locale },
        new CallScope(session),
        Buffer.byteLength(JSON.stringify(request)),
      );
    });
  } finally {
    parts.pool.release(serviceId, session);
  }
}

/**
 * tools/list through the link a user's /proxy session would get, as a short-lived peer of its own
 * (released at the end, so an isolated service's process for it is stopped). Pages are followed.
 */
export async function listUpstreamTools(
  pool: UpstreamPool,
  catalog: ServiceCatalog,
  serviceId: number,
  userId: number,
): Promise<ListedTool[]> {
  const service = await catalog.byId(serviceId);
  if (!service) throw new Error(`service ${serviceId} not found`);
  if (!service.enabled) throw new Error(`service ${service.name} is disabled`);
  const peer = { id: `console-${randomUUID()}`, userId, protocolVersion: LATEST_PROTOCOL_VERSION, notify() {} };
  try {
    const link = await pool.acquire(service, peer);
    await link.initialize(peer, { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO });
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await new Promise<{ tools?: ListedTool[]; nextCursor?: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('tools/list timed out')), LIST_TIMEOUT_MS);
        link.request(
          peer,
          { jsonrpc: '2.0', id: page + 1, method: 'tools/list', params: cursor ? { cursor } : {} },
          {
            notification() {},
            response(message) {
              clearTimeout(timer);
              if ('error' in message) reject(new Error(message.error.message));
              else resolve(message.result as { tools?: ListedTool[]; nextCursor?: string });
            },
          },
        );
      });
      tools.push(...(result.tools ?? []));
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  } finally {
    pool.release(serviceId, peer);
  }
}

/**
 * A health check of one user's own connection to a per-user OAuth service (issue 29): tools/list through the link
 * that user's /proxy session gets, timed, so the count is that user's tools. Nothing is recorded here: the
 * service's row holds the check made without a user, and the caller stores this one with the user's connection.
 */
export async function checkHealthAs(
  parts: { pool: UpstreamPool; catalog: ServiceCatalog; redact(text: string): string },
  serviceId: number,
  userId: number,
): Promise<HealthResult> {
  const started = Date.now();
  try {
    const tools = await listUpstreamTools(parts.pool, parts.catalog, serviceId, userId);
    const checkedAt = Date.now();
    return { status: 'healthy', details: describeRoundTrip(tools.length, checkedAt - started), toolCount: tools.length, checkedAt };
  } catch (err) {
    // The connection went meanwhile (disconnected, its refresh token revoked): the user connects again.
    if (err instanceof UpstreamConnectionMissing)
      return { status: 'needs_authorization', details: storedText(err.data()), checkedAt: Date.now() };
    return { status: 'unhealthy', details: parts.redact(errorText(err)), checkedAt: Date.now() };
  }
}
