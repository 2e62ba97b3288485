import {
  BindingParams,
  envelope,
  OAuthAuthorizeQuery,
  OAuthAuthorizeResult,
  OAuthCallbackQuery,
  OAuthCallbackResult,
  OAuthProvider,
  PublicUser,
} from '@toolport/contract';
import type { FastifyRequest } from 'fastify';
import type { ZodApi } from '../../http/api.js';
import { authenticate, type GuardDeps, principalOf } from '../../http/guard.js';
import { ok } from '../../http/locale.js';
import { clearBrowserNonce, readBrowserNonce, setBrowserNonce } from './browser-cookie.js';
import { providerLabels } from './providers.js';
import { type OAuthService, STATE_TTL_SECONDS } from './service.js';

const tags = ['oauth'];
const isOn = (flag: string | undefined) => flag === '1' || flag === 'true';
/** Where the console runs, as the browser reached it (X-Forwarded-* honoured: the app trusts its proxy). */
const originOf = (req: FastifyRequest) => `${req.protocol}://${req.host}`;

/** Sign-in with GitHub and Google, and linking providers to the caller's account. */
export async function oauthRoutes(api: ZodApi, oauth: OAuthService, guard: GuardDeps): Promise<void> {
  for (const provider of OAuthProvider.options) {
    const label = providerLabels[provider];

    api.get(
      `/oauth/${provider}/authorize`,
      {
        config: { auth: 'public' },
        schema: {
          tags,
          summary: `Start signing in with ${label} (with bind=1 and a bearer token: link ${label} to the caller)`,
          security: [],
          querystring: OAuthAuthorizeQuery,
          response: { 200: envelope(OAuthAuthorizeResult) },
        },
      },
      async (req, reply) => {
        // Linking is for the signed-in caller only; plain sign-in needs no token.
        const bindUserId = isOn(req.query.bind) ? (await authenticate(guard, req)).id : undefined;
        const started = await oauth.start(provider, { origin: originOf(req), ip: req.ip, bindUserId });
        setBrowserNonce(req, reply, provider, started.browserNonce, STATE_TTL_SECONDS);
        if (isOn(req.query.redirect)) return reply.redirect(started.url, 302);
        return ok(reply, { url: started.url });
      },
    );

    api.get(
      `/oauth/${provider}`,
      {
        config: { auth: 'public' },
        schema: {
          tags,
          summary: `Finish signing in with ${label}: exchanges the code and answers like sign-in`,
          security: [],
          querystring: OAuthCallbackQuery,
          response: { 200: envelope(OAuthCallbackResult) },
        },
      },
      async (req, reply) => {
        // The nonce is single-use like the state: gone whatever the outcome.
        clearBrowserNonce(req, reply, provider);
        const result = await oauth.finish(provider, req.query, readBrowserNonce(req, provider));
        return ok(reply, result, result.mode === 'bind' ? req.t('oauth.bound', { provider: label }) : req.t('auth.login_success'));
      },
    );
  }

  api.delete(
    '/user/bindings/:provider',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Unlink GitHub or Google from the caller’s account (not the last way to sign in)',
        params: BindingParams,
        response: { 200: envelope(PublicUser) },
      },
    },
    async (req, reply) =>
      ok(
        reply,
        await oauth.unbind(principalOf(req).id, req.params.provider),
        req.t('oauth.unbound', { provider: providerLabels[req.params.provider] }),
      ),
  );
}
