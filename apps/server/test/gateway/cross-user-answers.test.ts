import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ListTasksResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';
import { PIN } from './modern-kit.js';

/** How a client reaches the gateway: SDK v1 or v2 in the 2025 era, or SDK v2 pinned to 2026-07-28. */
type Kind = 'v1' | 'v2' | 'modern';

interface Person {
  name: string;
  key: string;
  /** What this person's clients answer: a root, a sampled text, a name for a form. */
  root: string;
  sampled: string;
  elicited: string;
}

interface Asked {
  roots: number;
  sampling: number;
  elicitation: number;
}

interface Capable {
  who: Person;
  asked: Asked;
  call(name: string, args?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

const CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} };

const textOf = (result: unknown): string =>
  ((result as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/**
 * A real SDK client of `who` declaring roots, sampling and elicitation, whose handlers answer with that
 * person's own root, sampled text and name, and count how often each was asked.
 */
async function capable(url: string, who: Person, kind: Kind): Promise<Capable> {
  const asked: Asked = { roots: 0, sampling: 0, elicitation: 0 };
  const headers = { authorization: `Bearer ${who.key}` };
  const roots = () => {
    asked.roots += 1;
    return { roots: [{ uri: who.root, name: `${who.name}'s project` }] };
  };
  const sampled = () => {
    asked.sampling += 1;
    return { role: 'assistant' as const, content: { type: 'text' as const, text: who.sampled }, model: 'test-model' };
  };
  const elicited = () => {
    asked.elicitation += 1;
    return { action: 'accept' as const, content: { name: who.elicited } };
  };
  const info = { name: `cross-user-${who.name}-${kind}`, version: '1.0.0' };
  if (kind === 'v1') {
    const client = new ClientV1(info, { capabilities: CAPABILITIES });
    client.setRequestHandler(ListRootsRequestSchema, async () => roots());
    client.setRequestHandler(CreateMessageRequestSchema, async () => sampled());
    client.setRequestHandler(ElicitRequestSchema, async () => elicited());
    await client.connect(new HttpV1(new URL(url), { requestInit: { headers } }));
    return {
      who,
      asked,
      call: async (name, args = {}) => textOf(await client.callTool({ name, arguments: args })),
      close: () => client.close(),
    };
  }
  const client = new ClientV2(info, {
    capabilities: CAPABILITIES,
    ...(kind === 'modern' ? { versionNegotiation: { mode: PIN } } : {}),
  } as ConstructorParameters<typeof ClientV2>[1]);
  client.setRequestHandler('roots/list', async () => roots());
  client.setRequestHandler('sampling/createMessage', async () => sampled());
  client.setRequestHandler('elicitation/create', async () => elicited());
  await client.connect(new HttpV2(new URL(url), { requestInit: { headers } }));
  if (kind === 'modern') expect(client.getProtocolEra()).toBe('modern');
  return {
    who,
    asked,
    call: async (name, args = {}) => textOf(await client.callTool({ name, arguments: args })),
    close: () => client.close(),
  };
}

/** Nothing `seen` (a result one person's call got) carries another person's root, sampled text or name. */
function expectNothingOf(others: Person[], seen: string): void {
  for (const other of others) {
    expect(seen).not.toContain(other.root);
    expect(seen).not.toContain(other.sampled);
    expect(seen).not.toContain(other.elicited);
  }
}

/** What server-everything's get-roots-list says when it was given no roots. */
const NO_ROOTS = 'no roots are currently configured';
/** The gateway's refusal of a request it cannot attribute to one user's call for certain. */
const UNATTRIBUTED =
  /cannot be relayed to a client: (other users' calls have run on this shared connection|\d client requests are in flight)/;

/**
 * Two users with their own keys and their own clients on one shared server-everything (stdio), through
 * /proxy and a group, in both protocol eras: what one user's client answers to a server-to-client request
 * (roots, sampling, elicitation) never reaches the other user's call, and one user's tasks are not another's
 * (docs/security.md, decision 0042). Per-user and isolated processes keep relaying everything.
 */
describe('server-to-client requests of a shared upstream never cross users', () => {
  let gw: LiveGateway;
  let alice: Person;
  let bob: Person;
  let adminToken: string;
  const open: Capable[] = [];
  const proxy = (service: string) => `${gw.url}/proxy/${service}/mcp`;
  const group = (name: string) => `${gw.url}/group/${name}/mcp`;
  const connect = async (url: string, who: Person, kind: Kind) => {
    const client = await capable(url, who, kind);
    open.push(client);
    return client;
  };
  /** One call of a person's client, whose result must carry nothing of the other person's answers. */
  const ask = async (client: Capable, tool: string, args: Record<string, unknown> = {}) => {
    const text = await client.call(tool, args);
    expectNothingOf(client.who === alice ? [bob] : [alice], text);
    return text;
  };

  /** A group `<service>-team` of that one service, made through the admin API. */
  const addGroup = async (service: string) => {
    const id = (await gw.ctx.catalog.byName(service))?.id;
    const created = await apiCall(gw.url, adminToken, 'POST', '/groups', { name: `${service}-team`, members: [{ service_id: id }] });
    expect(created.status).toBe(201);
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    const person = async (name: string, elicited: string): Promise<Person & { id: number }> => {
      const user = await addUser(gw.ctx, name);
      return { name, id: user.id, key: user.key, root: `file:///${name}-private`, sampled: `${name}'s model says hello`, elicited };
    };
    alice = await person('alice', 'Alice Liddell');
    const bobUser = await person('bob', 'Bob Cratchit');
    bob = bobUser;
    adminToken = (await addUserWithToken(gw.ctx, 'admin', Role.Admin)).token;
    for (const service of ['roots', 'asks']) {
      await addService(gw.ctx, { name: service });
      await addGroup(service);
    }
    // Bob's personal values: his requests to `own` are served by a process of his own.
    const own = await addService(gw.ctx, { name: 'own' });
    await gw.ctx.db
      .insertInto('service_user_envs')
      .values({ service_id: own, user_id: bobUser.id, env_enc: gw.ctx.secrets.encryptJson({ OWNER: 'bob' }), updated_at: Date.now() })
      .execute();
    const isolated = await addService(gw.ctx, { name: 'isolated' });
    await gw.ctx.db.updateTable('services').set({ isolation: 'session' }).where('id', '=', isolated).execute();
    gw.ctx.events.emit({ type: 'service.changed', serviceId: isolated });
  });
  afterAll(async () => {
    for (const client of open) await client.close().catch(() => undefined);
    await gw?.close();
  });

  it("never shows one user's roots to another, through /proxy and a group, in both eras", async () => {
    const aliceV1 = await connect(proxy('roots'), alice, 'v1');
    const bobV2 = await connect(proxy('roots'), bob, 'v2');
    const bobInGroup = await connect(group('roots-team'), bob, 'v2');
    const aliceModernInGroup = await connect(group('roots-team'), alice, 'modern');
    const bobModern = await connect(proxy('roots'), bob, 'modern');
    const texts = [
      await ask(aliceV1, 'get-roots-list'),
      await ask(bobV2, 'get-roots-list'),
      await ask(bobInGroup, 'roots__get-roots-list'),
      await ask(aliceModernInGroup, 'roots__get-roots-list'),
      await ask(bobModern, 'get-roots-list'),
      await ask(aliceV1, 'get-roots-list'),
    ];
    // Several users share the process: the gateway answers its roots/list itself, with none, and asks no client.
    for (const text of texts) expect(text).toContain(NO_ROOTS);
    for (const client of [aliceV1, bobV2, bobInGroup, aliceModernInGroup, bobModern]) expect(client.asked.roots).toBe(0);
  });

  it('relays sampling and elicitation to the only user whose calls ran on the connection, then refuses what it cannot attribute', async () => {
    const first = await connect(proxy('asks'), alice, 'v1');
    expect(await ask(first, 'trigger-sampling-request', { prompt: 'hi', maxTokens: 5 })).toContain(alice.sampled);
    expect(await ask(first, 'trigger-elicitation-request')).toContain(`Name: ${alice.elicited}`);
    expect(first.asked).toEqual({ roots: 0, sampling: 1, elicitation: 1 });

    // Bob's call runs on the same process: from now on a question that names no call may come of either's.
    const bobGroup = await connect(group('asks-team'), bob, 'v2');
    expect(await ask(bobGroup, 'asks__trigger-sampling-request', { prompt: 'mine?', maxTokens: 5 })).toMatch(UNATTRIBUTED);
    const others = [
      await connect(proxy('asks'), bob, 'modern'),
      await connect(group('asks-team'), alice, 'modern'),
      await connect(proxy('asks'), bob, 'v1'),
    ];
    // Interleaved: every user's calls at once, on every door.
    const answers = await Promise.all([
      ask(first, 'trigger-sampling-request', { prompt: 'again', maxTokens: 5 }),
      ask(others[0] as Capable, 'trigger-elicitation-request'),
      ask(others[1] as Capable, 'asks__trigger-elicitation-request'),
      ask(others[2] as Capable, 'trigger-sampling-request', { prompt: 'bob', maxTokens: 5 }),
      ask(bobGroup, 'asks__trigger-elicitation-request'),
    ]);
    for (const text of answers) expect(text).toMatch(UNATTRIBUTED);
    expect(first.asked).toEqual({ roots: 0, sampling: 1, elicitation: 1 });
    for (const client of [bobGroup, ...others]) expect(client.asked).toEqual({ roots: 0, sampling: 0, elicitation: 0 });
  });

  it("keeps one user's tasks from another on a shared process", async () => {
    const raw = async (who: Person) => {
      const client = new ClientV1({ name: `tasks-${who.name}`, version: '1.0.0' }, { capabilities: {} });
      await client.connect(new HttpV1(new URL(proxy('asks')), { requestInit: { headers: { authorization: `Bearer ${who.key}` } } }));
      return client;
    };
    const a = await raw(alice);
    const b = await raw(bob);
    try {
      // The clients were never told of tasks: a task-augmented call goes up as a plain one, which this tool refuses.
      const call = { name: 'simulate-research-query', arguments: { topic: "alice's secret topic" }, task: { ttl: 60_000 } };
      const created = await a.request({ method: 'tools/call', params: call }, CreateTaskResultSchema).then(
        (result) => result.task.taskId,
        (err: Error) => err.message,
      );
      for (const method of ['tasks/list', 'tasks/get', 'tasks/result', 'tasks/cancel']) {
        const params = method === 'tasks/list' ? {} : { taskId: created };
        const answer = await b.request({ method, params }, ListTasksResultSchema.passthrough()).then(
          (result) => JSON.stringify(result),
          (err: Error) => err.message,
        );
        expect(answer).not.toContain(created);
        expect(answer).toContain(`${method} is not available: the tool server is shared by several users`);
      }
      expect(created).not.toMatch(/^[0-9a-f]{32}$/);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("relays everything as it is on a user's own process and on an isolated service", async () => {
    const aliceShared = await connect(proxy('own'), alice, 'v2');
    const bobOwn = await connect(proxy('own'), bob, 'v1');
    expect(await ask(bobOwn, 'get-roots-list')).toContain(bob.root);
    expect(await ask(bobOwn, 'trigger-sampling-request', { prompt: 'own', maxTokens: 5 })).toContain(bob.sampled);
    expect(await ask(aliceShared, 'get-roots-list')).toContain(NO_ROOTS);
    expect(bobOwn.asked.sampling).toBe(1);
    expect(bobOwn.asked.roots).toBeGreaterThan(0);
    expect(aliceShared.asked.roots).toBe(0);

    for (const [who, kind] of [
      [alice, 'v1'],
      [bob, 'v2'],
      [bob, 'modern'],
    ] as const) {
      const client = await connect(proxy('isolated'), who, kind);
      expect(await ask(client, 'get-roots-list')).toContain(who.root);
      expect(await ask(client, 'trigger-elicitation-request')).toContain(`Name: ${who.elicited}`);
      expect(client.asked.elicitation).toBe(1);
    }
  });
});
