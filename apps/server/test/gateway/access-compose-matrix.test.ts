import path from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkce } from '../authorization-server/oauth-kit.js';
import { engines } from '../harness.js';
import { addService, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';
import { modernPost, PIN, v2Client } from './modern-kit.js';

const catalogServer = path.join(import.meta.dirname, '../fixtures/catalog-server.mjs');
const REDIRECT = 'http://127.0.0.1:7777/cb';

/**
 * The access matrix of decision 0040 (issue 24): "a call reaches a service only if the caller may use that
 * service and, when it comes through a group, that group (admins always may)", asked of every cell of
 * users × service × group × path × protocol era, through the real app with real members (the catalog
 * fixture, official SDK v1 over stdio) and real clients (SDK v1 in the 2025-11-25 era, SDK v2 pinned to
 * 2026-07-28).
 *
 * - Users: `admin` (role 10); `allowed`, on the access list of every restricted service and of no restricted
 *   group; `notAllowed`, on no restricted service's list and on every restricted group's list. So both
 *   "the group lets in, the service refuses" (notAllowed × restricted service) and "the service lets in, the
 *   group refuses" (allowed × restricted group) occur.
 * - Service: `open` or `restricted` (to `allowed`). Group: the one the service sits in: `none`, an `open`
 *   group, or a `restricted` one (to `notAllowed`); each group has an `all`-mode and a `discovery`-mode face
 *   with the same two members (`open-in-<group>` and `restricted-in-<group>`).
 * - Paths: `/proxy/<service>` and the console's Try it (never through a group, whatever group the service
 *   sits in); the group in `all` mode (its tool, prompt, resource and resource template listed and used by
 *   name or URI), `search_tools` and `call_tool` of the discovery face (these three need a group: with group
 *   `none` there is none to go through, so those cells do not exist); an OAuth token bound to the endpoint
 *   the call goes through (the service's, or the group's), then used for the call.
 *
 * Each path's cells are compared whole, as a table, with the one computed by the rule below; a refusal is
 * also told apart by which door refused (the group's 403 before anything is asked, or the member's refusal
 * naming the service).
 */

type UserKind = 'admin' | 'allowed' | 'notAllowed';
type ServiceKind = 'open' | 'restricted';
type GroupKind = 'none' | 'open' | 'restricted';
type PathKind = 'proxy' | 'tryIt' | 'groupAll' | 'discoverySearch' | 'discoveryCall' | 'oauthToken';
type Era = '2025-11-25' | '2026-07-28';

const USERS: UserKind[] = ['admin', 'allowed', 'notAllowed'];
const SERVICES: ServiceKind[] = ['open', 'restricted'];
const GROUPS: GroupKind[] = ['none', 'open', 'restricted'];
const PATHS: PathKind[] = ['proxy', 'tryIt', 'groupAll', 'discoverySearch', 'discoveryCall', 'oauthToken'];
const ERAS: Era[] = ['2025-11-25', '2026-07-28'];
const THROUGH_A_GROUP: PathKind[] = ['groupAll', 'discoverySearch', 'discoveryCall'];
const THROUGH_GROUP_OUTCOMES = ['reached', 'refused by the group', 'refused by the service'];
const OUTCOMES: Record<PathKind, string[]> = {
  proxy: ['reached', 'refused by the service'],
  tryIt: ['reached', 'refused by the service'],
  groupAll: THROUGH_GROUP_OUTCOMES,
  discoverySearch: THROUGH_GROUP_OUTCOMES,
  discoveryCall: THROUGH_GROUP_OUTCOMES,
  // A token for a group the user may use, whose member they may not: issued, and the member's call refused.
  oauthToken: ['reached', 'no token', 'refused by the service'],
};

// ---- the rule, from the sentence --------------------------------------------------------

const onServiceList = (user: UserKind) => user === 'allowed';
const onGroupList = (user: UserKind) => user === 'notAllowed';
const mayUseService = (user: UserKind, service: ServiceKind) => user === 'admin' || service === 'open' || onServiceList(user);
/** `null`: the call comes through no group. */
const mayUseGroup = (user: UserKind, group: GroupKind | null) =>
  user === 'admin' || group === null || group === 'open' || onGroupList(user);

/** The group a path's call goes through, or null. */
const groupOf = (path: PathKind, group: GroupKind): GroupKind | null =>
  THROUGH_A_GROUP.includes(path) || (path === 'oauthToken' && group !== 'none') ? group : null;

const exists = (path: PathKind, group: GroupKind) => !(THROUGH_A_GROUP.includes(path) && group === 'none');

function expected(user: UserKind, service: ServiceKind, group: GroupKind, path: PathKind): string {
  const through = groupOf(path, group);
  if (path === 'oauthToken') {
    // The token is bound to the endpoint the call goes through: issued only when the user may use that endpoint.
    const endpointOk = through === null ? mayUseService(user, service) : mayUseGroup(user, through);
    if (!endpointOk) return 'no token';
  }
  if (!mayUseGroup(user, through)) return 'refused by the group';
  if (!mayUseService(user, service)) return 'refused by the service';
  return 'reached';
}

// ---- names -------------------------------------------------------------------------------------

const serviceName = (service: ServiceKind, group: GroupKind) => `${service}-in-${group}`;
const groupName = (group: Exclude<GroupKind, 'none'>, mode: 'all' | 'disc') => `${group}-${mode}`;
const cellKey = (user: UserKind, service: ServiceKind, group: GroupKind) => `${user} × ${service} service × group ${group}`;

/** What both SDK majors' clients offer with the same call shapes. */
interface Conn {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getPrompt(params: { name: string }): Promise<unknown>;
  listResources(): Promise<{ resources: { uri: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(params: { uri: string }): Promise<unknown>;
  close(): Promise<void>;
}

/** One OAuth flow: what the consent page was told, the outcome of an Allow sent anyway, and the token or the token endpoint's error. */
interface OAuthOutcome {
  consent: { allowed: boolean; refusal?: string };
  decided: string;
  token?: string;
  tokenError?: string;
}

type Attempt<T> = { ok: true; value: T } | { ok: false; message: string };
const attempt = async <T>(run: () => Promise<T>): Promise<Attempt<T>> => {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
};
const firstText = (result: unknown) => ((result as { content?: { text?: string }[] }).content ?? [])[0]?.text ?? '';

describe.each(engines)('access composes on every path and in both eras (%s)', (engine) => {
  let gw: LiveGateway;
  const users = {} as Record<UserKind, { id: number; key: string; token: string }>;
  const serviceIds = new Map<string, number>();
  const conns = new Map<string, Promise<Attempt<Conn>>>();
  const tokens = new Map<string, Promise<OAuthOutcome>>();
  let clientId: string;

  /** One client per era, credential and endpoint, opened on first use; a refused connection is kept as such. */
  const conn = (era: Era, credential: string, endpoint: string): Promise<Attempt<Conn>> => {
    const key = `${era} ${credential} ${endpoint}`;
    let found = conns.get(key);
    if (!found) {
      const url = `${gw.url}${endpoint}`;
      found = attempt(async (): Promise<Conn> => {
        if (era === '2025-11-25') {
          const client = new ClientV1({ name: 'access-matrix', version: '1.0.0' }, { capabilities: {} });
          await client.connect(new HttpV1(new URL(url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
          return client as unknown as Conn;
        }
        try {
          return (await v2Client(url, credential, PIN)).client as unknown as Conn;
        } catch (err) {
          // SDK v2 reports a refused endpoint by its status alone: the refusal's own words come from a raw request.
          if (!String(err).includes('HTTP 403')) throw err;
          const raw = await modernPost(url, credential, { method: 'server/discover' });
          throw new Error(`HTTP ${raw.status}: ${raw.body.error?.message}`);
        }
      });
      conns.set(key, found);
    }
    return found;
  };

  /** Which door a refusal came from, read from its words (every refusal names what refused). */
  const refusedBy = (message: string, service: string, group: string | null): string => {
    if (group && message.includes(`you do not have access to ${group}`)) return 'refused by the group';
    if (message.includes(`you do not have access to ${service}`)) return 'refused by the service';
    return `refused otherwise: ${message.slice(0, 200)}`;
  };

  beforeAll(async () => {
    gw = await startGateway(engine);
    users.admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    users.allowed = await addUserWithToken(gw.ctx, 'allowed');
    users.notAllowed = await addUserWithToken(gw.ctx, 'not-allowed');
    const admin = (method: string, url: string, body?: unknown) => apiCall(gw.url, users.admin.token, method, url, body);
    for (const group of GROUPS) {
      for (const service of SERVICES) {
        const name = serviceName(service, group);
        const id = await addService(gw.ctx, { name, args: [catalogServer], env: { CATALOG_NAME: name } });
        serviceIds.set(name, id);
        if (service === 'restricted') {
          const set = await admin('PUT', `/mcp_services/${id}`, { access: { restricted: true, user_ids: [users.allowed.id] } });
          expect(set.status).toBe(200);
        }
      }
      if (group === 'none') continue;
      for (const mode of ['all', 'disc'] as const) {
        const created = await admin('POST', '/groups', {
          name: groupName(group, mode),
          mode: mode === 'all' ? 'all' : 'discovery',
          members: SERVICES.map((s) => ({ service_id: serviceIds.get(serviceName(s, group)) })),
          access: group === 'restricted' ? { restricted: true, user_ids: [users.notAllowed.id] } : { restricted: false, user_ids: [] },
        });
        expect(created.status, created.body.message).toBe(201);
      }
    }
    const registered = await fetch(`${gw.url}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Matrix Client', redirect_uris: [REDIRECT] }),
    });
    expect(registered.status).toBe(201);
    clientId = ((await registered.json()) as { client_id: string }).client_id;
  }, 120_000);

  afterAll(async () => {
    for (const c of conns.values()) {
      const opened = await c;
      if (opened.ok) await opened.value.close().catch(() => undefined);
    }
    await gw?.close();
  });

  // ---- one cell per path -------------------------------------------------------------------------

  async function proxy(era: Era, user: UserKind, service: ServiceKind, group: GroupKind): Promise<string> {
    const name = serviceName(service, group);
    const c = await conn(era, users[user].key, `/proxy/${name}/mcp`);
    if (!c.ok) return refusedBy(c.message, name, null);
    const called = await attempt(() => c.value.callTool({ name: 'echo', arguments: { message: 'hi' } }));
    if (!called.ok) return refusedBy(called.message, name, null);
    return firstText(called.value) === `${name}: hi` ? 'reached' : `wrong answer: ${firstText(called.value)}`;
  }

  async function tryIt(user: UserKind, service: ServiceKind, group: GroupKind): Promise<string> {
    const id = serviceIds.get(serviceName(service, group)) as number;
    const res = await apiCall(gw.url, users[user].token, 'POST', `/mcp_services/${id}/tools/echo/call`, {
      arguments: { message: 'tried' },
    });
    if (res.status === 200) return res.body.data.content[0]?.text === `${serviceName(service, group)}: tried` ? 'reached' : 'wrong answer';
    // The console's refusal names the id the caller sent, never the name of a service they may not use.
    if (res.status === 403 && res.body.message === `You do not have access to the service with ID ${id}`) return 'refused by the service';
    return `refused otherwise: ${res.status} ${res.body.message}`;
  }

  /** `all` mode: the member's tool, prompt, resource and template are listed and used exactly when it may be called. */
  async function groupAll(era: Era, user: UserKind, service: ServiceKind, group: Exclude<GroupKind, 'none'>): Promise<string> {
    const name = serviceName(service, group);
    const gname = groupName(group, 'all');
    const c = await conn(era, users[user].key, `/group/${gname}/mcp`);
    if (!c.ok) return refusedBy(c.message, name, gname);
    const client = c.value;
    const uri = `catalog://${name}/readme`;
    const listed = {
      tool: (await client.listTools()).tools.some((t) => t.name === `${name}__echo`),
      prompt: (await client.listPrompts()).prompts.some((p) => p.name === `${name}__brief`),
      resource: (await client.listResources()).resources.some((r) => r.uri === uri),
      template: (await client.listResourceTemplates()).resourceTemplates.some((r) => r.uriTemplate === `catalog://${name}/items/{id}`),
    };
    const call = await attempt(() => client.callTool({ name: `${name}__echo`, arguments: { message: 'hi' } }));
    const prompt = await attempt(() => client.getPrompt({ name: `${name}__brief` }));
    const read = await attempt(() => client.readResource({ uri }));
    if (Object.values(listed).every(Boolean) && call.ok && prompt.ok && read.ok) {
      return firstText(call.value) === `${name}: hi` ? 'reached' : `wrong answer: ${firstText(call.value)}`;
    }
    const hidden = Object.values(listed).every((v) => !v);
    const refusals = [call, prompt].map((a) => (a.ok ? 'answered' : refusedBy(a.message, name, gname)));
    // Never listed for this user, the resource is unknown to their session: nothing says whose it is.
    const readRefused = !read.ok && read.message.includes(`Unknown resource: ${uri}`);
    if (hidden && refusals.every((r) => r === 'refused by the service') && readRefused) return 'refused by the service';
    return `inconsistent: ${JSON.stringify({ listed, refusals, read: read.ok ? 'answered' : read.message })}`;
  }

  async function discoverySearch(era: Era, user: UserKind, service: ServiceKind, group: Exclude<GroupKind, 'none'>): Promise<string> {
    const name = serviceName(service, group);
    const gname = groupName(group, 'disc');
    const c = await conn(era, users[user].key, `/group/${gname}/mcp`);
    if (!c.ok) return refusedBy(c.message, name, gname);
    const result = await c.value.callTool({ name: 'search_tools', arguments: { query: 'echoes a message back', limit: 20 } });
    const found = (result as { structuredContent: { tools: { name: string }[] } }).structuredContent.tools.map((t) => t.name);
    // The search itself worked: every group here has a member this user may use.
    if (found.length === 0) return 'search found nothing at all';
    return found.includes(`${name}__echo`) ? 'reached' : 'refused by the service';
  }

  async function discoveryCall(era: Era, user: UserKind, service: ServiceKind, group: Exclude<GroupKind, 'none'>): Promise<string> {
    const name = serviceName(service, group);
    const gname = groupName(group, 'disc');
    const c = await conn(era, users[user].key, `/group/${gname}/mcp`);
    if (!c.ok) return refusedBy(c.message, name, gname);
    const called = await attempt(() =>
      c.value.callTool({ name: 'call_tool', arguments: { name: `${name}__echo`, arguments: { message: 'found' } } }),
    );
    if (!called.ok) return refusedBy(called.message, name, gname);
    return firstText(called.value) === `${name}: found` ? 'reached' : `wrong answer: ${firstText(called.value)}`;
  }

  /** The OAuth flow for one endpoint as one user: the consent page's view, Allow (forged when not offered), the token. */
  const oauthFor = (user: UserKind, endpoint: string): Promise<OAuthOutcome> => {
    const key = `${user} ${endpoint}`;
    let found = tokens.get(key);
    if (!found) {
      found = (async () => {
        const { verifier, challenge } = pkce();
        const q = new URLSearchParams({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state: 'matrix',
          resource: `${gw.url}${endpoint}`,
        });
        const start = await fetch(`${gw.url}/oauth2/authorize?${q}`, { redirect: 'manual' });
        const request = new URL(String(start.headers.get('location'))).searchParams.get('request') as string;
        const view = await apiCall(gw.url, users[user].token, 'GET', `/oauth-server/requests/${request}`);
        const decided = await apiCall(gw.url, users[user].token, 'POST', `/oauth-server/requests/${request}`, { allow: true });
        const back = new URL(decided.body.data.redirect_to);
        const consent = { allowed: view.body.data.allowed, ...(view.body.data.refusal ? { refusal: view.body.data.refusal } : {}) };
        const code = back.searchParams.get('code');
        if (!code) return { consent, decided: back.searchParams.get('error') ?? 'no code' };
        const issued = await fetch(`${gw.url}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            code_verifier: verifier,
            client_id: clientId,
            redirect_uri: REDIRECT,
          }),
        });
        const body = (await issued.json()) as { access_token?: string; error?: string };
        return { consent, decided: 'code', ...(body.access_token ? { token: body.access_token } : { tokenError: body.error }) };
      })();
      tokens.set(key, found);
    }
    return found;
  };

  async function oauthToken(era: Era, user: UserKind, service: ServiceKind, group: GroupKind): Promise<string> {
    const name = serviceName(service, group);
    const gname = group === 'none' ? null : groupName(group, 'all');
    const endpoint = gname ? `/group/${gname}/mcp` : `/proxy/${name}/mcp`;
    const flow = await oauthFor(user, endpoint);
    if (!flow.token) {
      // Refused before any token: the page said why, an Allow sent anyway was turned into access_denied.
      const told = !flow.consent.allowed && flow.consent.refusal === 'no_access' && flow.decided === 'access_denied';
      return told ? 'no token' : `inconsistent: ${JSON.stringify(flow)}`;
    }
    if (!flow.consent.allowed) return `inconsistent: a token after a refused consent ${JSON.stringify(flow.consent)}`;
    const c = await conn(era, flow.token, endpoint);
    if (!c.ok) return refusedBy(c.message, name, gname);
    const called = await attempt(() => c.value.callTool({ name: gname ? `${name}__echo` : 'echo', arguments: { message: 'token' } }));
    if (!called.ok) return refusedBy(called.message, name, gname);
    return firstText(called.value) === `${name}: token` ? 'reached' : `wrong answer: ${firstText(called.value)}`;
  }

  const run = (era: Era, path: PathKind, user: UserKind, service: ServiceKind, group: GroupKind): Promise<string> => {
    if (path === 'proxy') return proxy(era, user, service, group);
    // The console's Try it is an API call, not an MCP session: the era does not reach it, it is asked in both loops.
    if (path === 'tryIt') return tryIt(user, service, group);
    if (path === 'oauthToken') return oauthToken(era, user, service, group);
    const g = group as Exclude<GroupKind, 'none'>;
    if (path === 'groupAll') return groupAll(era, user, service, g);
    if (path === 'discoverySearch') return discoverySearch(era, user, service, g);
    return discoveryCall(era, user, service, g);
  };

  for (const era of ERAS) {
    for (const path of PATHS) {
      it(`${path} in the ${era} era: every cell as the rule says`, async () => {
        const want: Record<string, string> = {};
        const cells: Promise<[string, string]>[] = [];
        for (const user of USERS) {
          for (const service of SERVICES) {
            for (const group of GROUPS) {
              if (!exists(path, group)) continue;
              const key = cellKey(user, service, group);
              want[key] = expected(user, service, group, path);
              // Cells are independent (a client per user and endpoint): asked together, they share the waits.
              cells.push(run(era, path, user, service, group).then((outcome) => [key, outcome]));
            }
          }
        }
        const got = Object.fromEntries(await Promise.all(cells));
        // The lists are chosen so that every kind of outcome the path can have occurs in its table.
        expect(new Set(Object.values(want))).toEqual(new Set(OUTCOMES[path]));
        expect(got).toEqual(want);
      });
    }
  }
});
