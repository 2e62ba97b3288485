import type { FastifyRequest } from 'fastify';

/**
 * The base URL MCP clients and browsers know this server by: the ServerAddress preference when an
 * admin set it (behind a reverse proxy that rewrites Host), else the request's own scheme and host
 * (X-Forwarded-Proto/-Host believed only from the proxies TRUST_PROXY names). Never ends in `/`.
 * The OAuth issuer, every metadata URL and every resource indicator are built on it.
 */
export function publicBase(req: FastifyRequest, serverAddress: string): string {
  if (serverAddress) return serverAddress.replace(/\/+$/, '');
  return `${req.protocol}://${req.host}`;
}
