import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type KeyIn, type McpClient, type Sdk, textOf, type Wire } from './clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';

/**
 * The user story: an MCP client, configured with the URL and key the console shows, uses an
 * installed stdio service through the gateway. Every combination of SDK major (1.x, 2.x),
 * downstream transport (streamable HTTP, legacy HTTP+SSE) and key placement (header, `?key=`).
 */
const combos: [Sdk, Wire, KeyIn][] = [];
for (const sdk of ['v1', 'v2'] as const)
  for (const wire of ['http', 'sse'] as const) for (const keyIn of ['header', 'query'] as const) combos.push([sdk, wire, keyIn]);

describe('MCP clients through the gateway (server-everything over stdio)', () => {
  let gw: LiveGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    key = (await addUser(gw.ctx, 'alice')).key;
    await addService(gw.ctx, { name: 'everything' });
  });
  afterAll(async () => gw?.close());

  describe.each(combos)('SDK %s over %s, key in %s', (sdk, wire, keyIn) => {
    let client: McpClient;
    beforeAll(async () => {
      client = await connect(gw.url, 'everything', key, { sdk, wire, keyIn });
    });
    afterAll(async () => client?.close());

    it('lists the upstream tools', async () => {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation']));
    });

    it('calls echo, get-sum and the image tool', async () => {
      expect(textOf(await client.callTool('echo', { message: `hello ${sdk} ${wire}` }))).toBe(`Echo: hello ${sdk} ${wire}`);
      expect(textOf(await client.callTool('get-sum', { a: 19, b: 23 }))).toContain('is 42');
      const image = await client.callTool('get-tiny-image', {});
      const block = image.content.find((c) => c.type === 'image');
      expect(block).toMatchObject({ type: 'image', mimeType: 'image/png' });
      expect(block?.type === 'image' ? Buffer.from(block.data, 'base64').subarray(1, 4).toString() : '').toBe('PNG');
    });

    it('lists and reads resources', async () => {
      const { resources } = await client.listResources();
      expect(resources.length).toBeGreaterThan(0);
      const first = resources[0] as { uri: string };
      const read = await client.readResource(first.uri);
      expect(read.contents[0]?.uri).toBe(first.uri);
    });

    it('lists and gets prompts', async () => {
      const names = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(names).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));
      const prompt = await client.getPrompt('args-prompt', { city: 'Lisbon' });
      const content = prompt.messages[0]?.content;
      expect(content?.type === 'text' ? content.text : '').toContain('Lisbon');
    });

    it('answers ping and reports no client-side errors', async () => {
      await client.ping();
      expect(client.errors).toEqual([]);
    });
  });
});
