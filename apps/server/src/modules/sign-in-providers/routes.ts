import { endpoints, OAuthProvider, oauthProviderLabels } from '@toolport/contract';
import type { FastifyRequest } from 'fastify';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { authenticate, type GuardDeps } from '../../http/guard.js';
import { ok } from '../../http/locale.js';
import { clearBrowserNonce, readBrowserNonce, setBrowserNonce } from './browser-cookie.js';
import { type SignInProvidersService, STATE_TTL_SECONDS } from './service.js';

const isOn = (flag: string | undefined) => flag === '1' || flag === 'true';
/** Where the console runs, as the browser reached it (X-Forwarded-* honoured: the app trusts its proxy). */
const originOf = (req: FastifyRequest) => `${req.protocol}://${req.host}`;

/** Sign-in with GitHub and Google, and linking providers to the caller's account. */
export async function oauthRoutes(api: ZodApi, oauth: SignInProvidersService, guard: GuardDeps): Promise<void> {
  for (const provider of OAuthProvider.options) {
    const label = oauthProviderLabels[provider];

    route(api, endpoints.oauth.authorize[provider], async (req, reply) => {
      // Linking is for the signed-in caller only; plain sign-in needs no token.
      const bindUserId = isOn(req.query.bind) ? (await authenticate(guard, req)).id : undefined;
      const started = await oauth.start(provider, { origin: originOf(req), ip: req.ip, bindUserId });
      setBrowserNonce(req, reply, provider, started.browserNonce, STATE_TTL_SECONDS);
      // A redirect answers through the reply, outside the envelope the table documents.
      if (isOn(req.query.redirect)) return reply.redirect(started.url, 302);
      return ok(reply, { url: started.url });
    });

    route(api, endpoints.oauth.callback[provider], async (req, reply) => {
      // The nonce is single-use like the state: gone whatever the outcome.
      clearBrowserNonce(req, reply, provider);
      const result = await oauth.finish(provider, req.query, readBrowserNonce(req, provider));
      return ok(reply, result, result.mode === 'bind' ? req.t('oauth.bound', { provider: label }) : req.t('auth.login_success'));
    });
  }

  // Any OpenID Connect provider an admin configured (decision 0048): the same flow, by slug.
  route(api, endpoints.oauth.oidcAuthorize, async (req, reply) => {
    const bindUserId = isOn(req.query.bind) ? (await authenticate(guard, req)).id : undefined;
    const slug = req.params.slug;
    const started = await oauth.startOidc(slug, { origin: originOf(req), ip: req.ip, bindUserId });
    setBrowserNonce(req, reply, `oidc_${slug}`, started.browserNonce, STATE_TTL_SECONDS);
    if (isOn(req.query.redirect)) return reply.redirect(started.url, 302);
    return ok(reply, { url: started.url });
  });

  route(api, endpoints.oauth.oidcCallback, async (req, reply) => {
    const slug = req.params.slug;
    clearBrowserNonce(req, reply, `oidc_${slug}`);
    const result = await oauth.finishOidc(slug, req.query, readBrowserNonce(req, `oidc_${slug}`), req.ip);
    const label = oauth.oidcSettings().find((p) => p.slug === slug)?.label ?? slug;
    return ok(reply, result, result.mode === 'bind' ? req.t('oauth.bound', { provider: label }) : req.t('auth.login_success'));
  });

  // An administrator links and unlinks identities of other users, and sees the sign-ins held for them (decision 0063).
  route(api, endpoints.oauth.identities, async (req, reply) => ok(reply, await oauth.identitiesOf(req.params.id)));
  route(api, endpoints.oauth.link, async (req, reply) =>
    ok(reply, await oauth.linkAs(req.principal, req.params.id, req.body), req.t('oauth.linked_by_admin')),
  );
  route(api, endpoints.oauth.unlink, async (req, reply) =>
    ok(reply, await oauth.unlinkAs(req.principal, req.params.id, req.params.identityId), req.t('oauth.unlinked_by_admin')),
  );
  route(api, endpoints.oauth.held, async (_req, reply) => ok(reply, await oauth.heldIdentities()));
  route(api, endpoints.oauth.dismissHeld, async (req, reply) => {
    await oauth.dismissHeld(req.params.id);
    return ok(reply, undefined, req.t('oauth.held_dismissed'));
  });

  route(api, endpoints.oauth.unbind, async (req, reply) =>
    ok(
      reply,
      await oauth.unbind(req.principal.id, req.params.provider),
      req.t('oauth.unbound', { provider: oauthProviderLabels[req.params.provider] }),
    ),
  );
}
