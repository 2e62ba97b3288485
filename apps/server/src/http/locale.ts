import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Locale, localeFrom, type MessageKey, type MessageParams, translate } from '../i18n/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    locale: Locale;
    t(key: MessageKey, params?: MessageParams): string;
  }
}

export function attachLocale(req: FastifyRequest): void {
  req.locale = localeFrom(req.headers['accept-language']);
  req.t = (key, params) => translate(req.locale, key, params);
}

/** `{success: true, message?, data?}` */
export function ok<T>(reply: FastifyReply, data?: T, message?: string, status = 200) {
  reply.status(status);
  return { success: true as const, ...(message ? { message } : {}), ...(data !== undefined ? { data } : {}) };
}
