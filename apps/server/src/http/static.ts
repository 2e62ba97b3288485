import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { preference } from './accept.js';

/**
 * Paths the single-page app never owns (docs/architecture.md §1): the API, the MCP endpoints (`/proxy`, and
 * `/group` for groups) and their OpenAPI face (`/openapi`), metrics, translations, the OAuth server's `/oauth2`, and `/.well-known`, where MCP
 * clients such as mcp-remote probe for OAuth metadata and must get JSON, never the page (routes
 * registered there, such as the OAuth server's metadata, answer before this fallback).
 */
const NOT_SPA = /^\/(api|proxy|group|openapi|metrics|locales|oauth2|\.well-known)(\/|$)/;
const API = /^\/api(\/|$)/;

/**
 * Serves the built console at `/` with an SPA fallback: any other GET that does not prefer JSON gets
 * index.html, so browsers and clients that accept anything (curl, uptime monitors, link previews:
 * `*\/*` or no Accept) see the console. Unknown /api paths answer a JSON 404, never the page.
 */
export async function serveConsole(app: FastifyInstance, distDir: string | undefined): Promise<void> {
  const indexFile = distDir ? path.join(distDir, 'index.html') : undefined;
  const hasConsole = !!indexFile && existsSync(indexFile);
  if (hasConsole && distDir) {
    // The build writes .br and .gz copies of every text file (apps/web/vite.config.ts); they are sent to
    // browsers that accept them, so no request pays for compression (decision 0023).
    await app.register(fastifyStatic, {
      root: distDir,
      wildcard: false,
      index: false,
      cacheControl: false,
      preCompressed: true,
      setHeaders: cacheHeaders,
    });
  }
  const indexHtml = hasConsole && indexFile ? readFileSync(indexFile, 'utf8') : fallbackPage;

  app.setNotFoundHandler((req, reply) => {
    const pathname = req.url.split('?')[0] ?? '/';
    const wantsPage =
      (req.method === 'GET' || req.method === 'HEAD') &&
      !NOT_SPA.test(pathname) &&
      !path.extname(pathname) &&
      preference(req.headers.accept) !== 'json';
    if (wantsPage) {
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(indexHtml);
    }
    const key = API.test(pathname) ? 'error.route_not_found' : 'error.path_not_found';
    return reply.status(404).send({ success: false, message: req.t(key, { method: req.method, path: pathname }) });
  });
}

function cacheHeaders(res: { setHeader(name: string, value: string): void }, file: string): void {
  // Vite fingerprints everything under assets/; the rest (locales, icons) may change between releases.
  res.setHeader('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
  // The same URL answers brotli, gzip or plain bytes by Accept-Encoding: caches must keep them apart.
  res.setHeader('vary', 'accept-encoding');
}

const fallbackPage =
  '<!doctype html><html><head><meta charset="utf-8"><title>Toolport</title></head><body><p>Toolport API is running. The console has not been built: run <code>npm run build</code>.</p></body></html>';
