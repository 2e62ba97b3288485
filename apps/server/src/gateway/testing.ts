import type { Gateway } from './deps.js';
import type { SessionLimits } from './downstream/session-registry.js';
import { internals } from './observation.js';
import type { Link } from './upstream/link.js';

/**
 * Test-only (docs/decisions/0062): what a test must change inside a running gateway and the server never does
 * from outside, so no method of `Gateway` offers it. `limits` is the session registry's own (a test lowers the
 * per-user cap for one case); `links` are the live 2025-11-25 links of a service (a test stops one under a swept
 * session, so that a call waits for its start). Only tests import it.
 */
export function gatewayInternalsForTests(gateway: Gateway): { limits: SessionLimits; links(serviceId: number): Link[] } {
  const found = internals.get(gateway);
  if (!found) throw new Error('not a gateway built by createGateway');
  return { limits: found.limits, links: (serviceId) => found.pool.links(serviceId) };
}
