import type { FastifyInstance } from 'fastify';
import { refusalBody } from './error-handler.js';

/**
 * Requests whose meaning depends on who reads them are refused (400) before anything else runs: two
 * `Host` headers (Node keeps the first, a proxy in front may have routed by the second: the host the
 * issuer, redirects and the DNS-rebinding check are built on would not be the one the request came by).
 * Conflicting `Content-Length` / `Transfer-Encoding` headers never get this far: Node's parser refuses
 * them, answered by `answerClientError` (test/http-hygiene.test.ts proves each over a raw socket).
 */
export function refuseAmbiguousRequests(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every request, the proxied calls included.
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw.rawHeaders;
    let hosts = 0;
    for (let i = 0; i < raw.length; i += 2) if (raw[i]?.length === 4 && raw[i]?.toLowerCase() === 'host') hosts++;
    if (hosts <= 1) return done();
    reply
      .code(400)
      .header('connection', 'close')
      .send(refusalBody(req.raw.url, req.locale, 'error.duplicate_host', 'Bad Request'));
  });
}
