import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible embeddings provider on loopback (`POST /v1/embeddings`, the wire format of
 * OpenAI, Ollama, vLLM, SiliconFlow, DashScope and Zhipu), for tests and the benchmark. Its vectors are
 * deterministic, made by a bag-of-words hashing model: each word (lowercased, a final s dropped) and each
 * CJK character lands with a sign in one of `dimensions` buckets. It knows no synonyms, so what hybrid
 * ranking adds with it is what a second, differently tokenised lexical view adds: a floor, not what a
 * trained model adds.
 */
export interface FakeEmbeddings {
  /** The base URL to set as EmbeddingsURL (…/v1). */
  url: string;
  /** Every request: its inputs, the model and dimensions asked, the Authorization header. */
  requests: { input: string[]; model: string; dimensions?: number; authorization: string }[];
  /** How it answers from now on. */
  mode: { delayMs: number; status: number; key?: string };
  close(): Promise<void>;
}

const DEFAULT_DIMENSIONS = 256;

function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The fake model: a signed hashing bag of words (and CJK characters), not normalised (the gateway normalises). */
export function hashingVector(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  const v: number[] = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[a-z0-9]+|[\u4e00-\u9fff]/g) ?? [];
  for (const raw of words) {
    const word = raw.length > 3 && raw.endsWith('s') ? raw.slice(0, -1) : raw;
    const h = fnv(word);
    v[h % dimensions] = (v[h % dimensions] as number) + ((h >>> 16) & 1 ? 1 : -1);
  }
  // An empty text still has a direction.
  if (!v.some((x) => x !== 0)) v[0] = 1;
  return v;
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const requests: FakeEmbeddings['requests'] = [];
  const mode: FakeEmbeddings['mode'] = { delayMs: 0, status: 200 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', async () => {
      const authorization = req.headers.authorization ?? '';
      const send = (status: number, payload: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, { error: { message: 'not found' } });
      let asked: { input?: unknown; model?: unknown; dimensions?: unknown };
      try {
        asked = JSON.parse(body);
      } catch {
        return send(400, { error: { message: 'invalid JSON' } });
      }
      const input = typeof asked.input === 'string' ? [asked.input] : Array.isArray(asked.input) ? asked.input.map(String) : [];
      const dimensions = typeof asked.dimensions === 'number' ? asked.dimensions : undefined;
      requests.push({ input, model: String(asked.model), ...(dimensions ? { dimensions } : {}), authorization });
      if (mode.delayMs > 0) await new Promise((r) => setTimeout(r, mode.delayMs));
      // As some providers do: the error repeats what it was sent (the gateway must not show the key).
      if (mode.key !== undefined && authorization !== `Bearer ${mode.key}`)
        return send(401, { error: { message: `Incorrect API key provided: ${authorization}` } });
      if (mode.status !== 200) return send(mode.status, { error: { message: 'provider unavailable' } });
      send(200, {
        object: 'list',
        model: asked.model,
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: hashingVector(text, dimensions) })),
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    mode,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
