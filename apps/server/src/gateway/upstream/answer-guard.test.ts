import type { JSONRPCErrorResponse } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { answerGuard } from './answer-guard.js';

/** A remote server's SSE answer, delivered in the given chunks. */
const sseAnswer = (chunks: string[]) => async () =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    }),
    { status: 200, headers: { 'content-type': 'text/event-stream' } },
  );

/** What the guard reports for a POST of requests `ids` answered with `chunks`, once the SDK side has read it all. */
async function guarded(ids: number[], chunks: string[]): Promise<JSONRPCErrorResponse[]> {
  const delivered: JSONRPCErrorResponse[] = [];
  const fetchLike = answerGuard(sseAnswer(chunks), (m) => delivered.push(m));
  const body = JSON.stringify(ids.map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: {} })));
  const response = await fetchLike('http://remote.test/mcp', { method: 'POST', body });
  await response.text();
  await new Promise((r) => setTimeout(r, 20));
  return delivered;
}

const answer = (id: number, text: string) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

describe('answerGuard', () => {
  it('reads events split anywhere, CRLF halves across chunks included, and fails only what was not answered', async () => {
    const big = 'z'.repeat(30_000);
    const stream = `event: message\r\ndata: ${answer(1, big)}\r\n\r\nevent: message\r\ndata: {"jsonrpc":"2.0","id":2,"result":{oops\r\n\r\n`;
    // Chunks of 7 bytes: every CR and LF pair is split somewhere, and the large event arrives in thousands of pieces.
    const chunks: string[] = [];
    for (let i = 0; i < stream.length; i += 7) chunks.push(stream.slice(i, i + 7));
    const delivered = await guarded([1, 2, 3], chunks);
    expect(delivered.map((m) => [m.id, m.error.message])).toEqual([
      [2, 'the remote server sent an answer that is not valid JSON'],
      [3, 'the remote server ended its answer stream without answering'],
    ]);
  });

  it('stays silent when every request was answered, whatever the line ends', async () => {
    for (const end of ['\n', '\r', '\r\n']) {
      const stream = `data: ${answer(1, 'one')}${end}${end}: a comment${end}data: ${answer(2, 'two')}${end}${end}`;
      expect(await guarded([1, 2], [stream.slice(0, 40), stream.slice(40)])).toEqual([]);
    }
  });
});
