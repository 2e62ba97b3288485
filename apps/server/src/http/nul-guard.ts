import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.js';

/**
 * Text with a NUL character is refused on every API route (400, naming the field) before any
 * schema or handler sees it. PostgreSQL cannot store or even compare such text (a query with one
 * fails with "invalid byte sequence"), process arguments and environment values cannot carry one,
 * and no field of the API has a use for it. Found by the fuzz suite (test/fuzz/api.fuzz.test.ts).
 */
export function refuseNulInput(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    if (!req.routeOptions.url?.startsWith('/api/')) return;
    const field = nulField('params', req.params) ?? nulField('query', req.query) ?? nulField('body', req.body);
    if (field) throw new AppError(400, 'error.nul_character', { field }, { code: 'validation_error' });
  });
}

/** Field paths name at most this many levels (the rest is `…`): input may nest 10k deep. */
const NAMED_LEVELS = 6;

/** The path of the first string (value or key) holding U+0000, walked without recursion. */
export function nulField(root: string, value: unknown): string | undefined {
  const stack: [string, number, unknown][] = [[root, 0, value]];
  const child = (path: string, depth: number, key: string | number) =>
    depth < NAMED_LEVELS ? `${path}.${key}` : depth === NAMED_LEVELS ? `${path}.…` : path;
  while (stack.length > 0) {
    const [path, depth, v] = stack.pop() as [string, number, unknown];
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([child(path, depth, i), depth + 1, v[i]]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (k.includes('\u0000')) return path;
        stack.push([child(path, depth, k), depth + 1, item]);
      }
    }
  }
  return undefined;
}
