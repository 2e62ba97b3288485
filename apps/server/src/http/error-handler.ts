import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { type Locale, localeFrom, type MessageKey, translate } from '../i18n/index.js';
import { isDatabaseUnavailable } from './db-unavailable.js';
import { AppError } from './errors.js';
import { attachLocale } from './locale.js';

function fieldOf(path: string | undefined, fallback: string): string {
  const cleaned = (path ?? '').replace(/^\//, '').replace(/\//g, '.');
  return cleaned || fallback;
}

/**
 * One place turns every failure into the envelope `{success:false, message}` with a real status.
 * Client mistakes get a translated message naming the field; anything unexpected is logged and
 * answered 500 with a generic message and no details.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError | Error, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      if (err.extra?.headers) reply.headers(err.extra.headers);
      return reply.status(err.status).send({
        success: false,
        message: req.t(err.key, err.params),
        ...(err.extra?.code ? { code: err.extra.code } : {}),
        ...(err.extra?.field ? { field: err.extra.field } : {}),
        ...(err.extra?.data !== undefined ? { data: err.extra.data } : {}),
      });
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const first = err.validation[0];
      const field = fieldOf(first?.instancePath, err.validationContext ?? 'body');
      return reply.status(400).send({
        success: false,
        code: 'validation_error',
        ...(first?.instancePath ? { field } : {}),
        message: req.t('error.validation', { field, reason: first?.message ?? 'invalid' }),
      });
    }
    const fe = err as FastifyError;
    if (
      fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      (fe.statusCode === 400 && err instanceof SyntaxError)
    ) {
      return reply.status(400).send({ success: false, code: 'invalid_json', message: req.t('error.invalid_json') });
    }
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.status(413).send({ success: false, code: 'body_too_large', message: req.t('error.body_too_large') });
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(415).send({ success: false, code: 'unsupported_media_type', message: req.t('error.unsupported_media_type') });
    }
    if (fe.statusCode === 429) {
      return reply.status(429).send({ success: false, code: 'rate_limited', message: req.t('error.rate_limited', { seconds: 60 }) });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply
        .status(fe.statusCode)
        .send({ success: false, message: req.t('error.validation', { field: 'request', reason: fe.message }) });
    }
    if (isDatabaseUnavailable(err)) {
      // Not a bug and not the client's fault: the database is away for now (it reconnects on its own).
      req.log.warn({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'database unavailable');
      return reply
        .status(503)
        .header('retry-after', '5')
        .send({ success: false, code: 'database_unavailable', message: req.t('error.database_unavailable') });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ success: false, message: req.t('error.internal') });
  });
}

/** Routes that answer in JSON-RPC (the MCP proxy) rather than with the console envelope. */
const isProxyPath = (url: string | undefined) => (url ?? '').startsWith('/proxy/');
/** Routes that answer in the OAuth format `{error, error_description}` (modules/authorization-server, decision 0041). */
export const isOAuthPath = (url: string | undefined) =>
  /^\/(oauth2|\.well-known\/(oauth-authorization-server|openid-configuration|oauth-protected-resource))(\/|\?|$)/.test(url ?? '');
const rpcError = (message: string) => ({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });

/**
 * A refusal made before any route runs, in the shape of the path it was meant for: JSON-RPC under
 * /proxy (English, as MCP clients show it), the OAuth format under the OAuth paths, else the envelope.
 */
export function refusalBody(url: string | undefined, locale: Locale, key: MessageKey, label: string): object {
  if (isProxyPath(url)) return rpcError(`${label}: ${translate('en', key)}`);
  if (isOAuthPath(url)) return { error: 'invalid_request', error_description: translate(locale, key) };
  return { success: false, message: translate(locale, key) };
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot decode (400) or a path parameter over the
 * router's length limit (414) is refused before any route or hook runs, so the locale is attached
 * here. Without this, Fastify answers its own `{error, code, message}` shape.
 */
export function answerFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  attachLocale(req);
  const status = err.code === 'FST_ERR_BAD_URL' ? 400 : err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 500;
  if (status === 500) req.log.error({ err }, 'unhandled router error');
  if (isProxyPath(req.raw.url)) {
    const text =
      status === 400 ? 'Bad Request: invalid URL' : status === 414 ? 'URI Too Long: a path segment is too long' : 'Internal error';
    void reply.status(status).send(rpcError(text));
    return;
  }
  const key = status === 400 ? 'error.bad_url' : status === 414 ? 'error.param_too_long' : 'error.internal';
  if (isOAuthPath(req.raw.url)) reply.header('cache-control', 'no-store');
  void reply.status(status).send(refusalBody(req.raw.url, req.locale, key, ''));
}

const CLIENT_ERRORS: Record<string, { status: number; label: string; key: MessageKey }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, label: 'Request Timeout', key: 'error.request_timeout' },
  HPE_HEADER_OVERFLOW: { status: 431, label: 'Request Header Fields Too Large', key: 'error.headers_too_large' },
};

/**
 * Fastify's `clientErrorHandler`: Node could not parse the request (bad bytes in the URL or headers,
 * oversized headers, a slow client). The envelope as everywhere else, in the language of the
 * request's Accept-Language when its header bytes arrived, else English.
 */
export function answerClientError(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[err.code ?? ''] ?? { status: 400, label: 'Bad Request', key: 'error.bad_request' as const };
  const raw: unknown = err.rawPacket;
  const head = Buffer.isBuffer(raw) ? raw.toString('latin1') : '';
  const language = /\r\naccept-language:[ \t]*([^\r\n]*)/i.exec(head)?.[1];
  const url = /^[A-Z]+ (\S+)/.exec(head)?.[1];
  const body = JSON.stringify(refusalBody(url, localeFrom(language), known.key, known.label));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${known.status} ${known.label}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
