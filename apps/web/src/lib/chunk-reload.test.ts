import { describe, expect, it } from 'vitest';
import { isChunkLoadError, serverAnswers } from './chunk-reload';

const answering = (status: number) => async () => new Response(null, { status });

describe('whether the server answers, before a missing chunk reloads the page (issue 29)', () => {
  it('is no when nothing answers, or a proxy says the server behind it is down', async () => {
    expect(await serverAnswers(async () => Promise.reject(new TypeError('Failed to fetch')))).toBe(false);
    for (const status of [502, 503, 504]) expect(await serverAnswers(answering(status))).toBe(false);
  });

  it('is yes for any answer of the server itself', async () => {
    for (const status of [200, 304, 404, 500]) expect(await serverAnswers(answering(status))).toBe(true);
  });

  it('asks for index.html without the cache', async () => {
    const asked: [string, RequestInit | undefined][] = [];
    await serverAnswers(async (url, init) => {
      asked.push([String(url), init]);
      return new Response(null, { status: 200 });
    });
    expect(asked[0]?.[0]).toBe('/');
    expect(asked[0]?.[1]).toMatchObject({ method: 'HEAD', cache: 'no-store' });
  });

  it('knows a chunk that failed to load from other errors', () => {
    expect(isChunkLoadError(new TypeError('Failed to fetch dynamically imported module: /assets/x.js'))).toBe(true);
    expect(isChunkLoadError(new Error('boom'))).toBe(false);
  });
});
