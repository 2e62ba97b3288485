import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError } from './errors.js';

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
        ...(err.extra?.data !== undefined ? { data: err.extra.data } : {}),
      });
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const first = err.validation[0];
      const field = fieldOf(first?.instancePath, err.validationContext ?? 'body');
      return reply.status(400).send({
        success: false,
        code: 'validation_error',
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
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ success: false, message: req.t('error.internal') });
  });
}
