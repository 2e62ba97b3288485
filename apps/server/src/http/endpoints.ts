import { type Endpoint, responseOf } from '@toolport/contract';
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { z } from 'zod';
import type { ZodApi } from './api.js';
import { unauthorized } from './errors.js';
import type { Principal } from './principals.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `route()`: the route was registered from the contract's endpoint table, not by hand. */
    endpoint?: true;
  }
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : unknown;

/** The signed-in caller of a `user` or `admin` endpoint; a `public` one has none. */
export type CallerOf<E extends Endpoint> = E['auth'] extends 'public' ? null : Principal;

/** A handler's request: params, query and body as the endpoint's schemas parsed them, and its caller. */
export type EndpointRequest<E extends Endpoint> = FastifyRequest<{
  Params: Parsed<E['params']>;
  Querystring: Parsed<E['query']>;
  Body: Parsed<E['body']>;
}> & { principal: CallerOf<E> };

type Answers<E extends Endpoint> =
  | (E['data'] extends z.ZodType
      ? {
          success: boolean;
          message?: string;
          data?: z.output<E['data']>;
          warnings?: E['warnings'] extends z.ZodType ? z.output<E['warnings']>[] : never;
        }
      : { success: true; message?: string })
  | (E['otherResponses'] extends Readonly<Record<number, z.ZodType>> ? z.output<E['otherResponses'][keyof E['otherResponses']]> : never);

/**
 * What a handler returns: a body of one of the endpoint's answers, or the reply itself when the handler
 * sent the answer another way (an event stream, a redirect).
 */
export type EndpointAnswer<E extends Endpoint> = Answers<E> | FastifyReply;

export type EndpointHandler<E extends Endpoint> = (req: EndpointRequest<E>, reply: FastifyReply) => Promise<EndpointAnswer<E>>;

/** The route options Fastify validates, serializes and documents by. */
export function schemaOf(e: Endpoint): FastifySchema {
  return {
    tags: [...e.tags],
    summary: e.summary,
    ...(e.description ? { description: e.description } : {}),
    ...(e.security ? { security: [] } : {}),
    ...(e.params ? { params: e.params } : {}),
    ...(e.query ? { querystring: e.query } : {}),
    ...(e.body ? { body: e.body } : {}),
    // An event stream or JSON lines is not one JSON body: nothing to serialize it by.
    ...(e.eventStream || e.jsonLines ? {} : { response: { [e.status ?? 200]: responseOf(e), ...e.otherResponses } }),
  } as FastifySchema;
}

/**
 * Registers `e` on `api` (mounted under /api): method, path, schemas and auth level come from the table,
 * so a route cannot differ from what the console calls and the API docs show.
 */
export function route<E extends Endpoint>(api: ZodApi, e: E, handler: EndpointHandler<E>): void {
  api.route({
    method: e.method,
    url: e.path,
    config: { auth: e.auth, endpoint: true },
    schema: schemaOf(e),
    handler: async (req, reply) => {
      // The guard has already refused a caller without the level; this keeps the type's promise if it ever did not.
      if (e.auth !== 'public' && !req.principal) throw unauthorized('auth.token_missing');
      return handler(req as unknown as EndpointRequest<E>, reply);
    },
  });
}
