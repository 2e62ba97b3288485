import { z } from 'zod';

/**
 * OpenID Connect sign-in providers (decision 0048): configured in Preferences (the `OIDCProviders`
 * preference, a JSON array) and by the `OIDC_PROVIDERS` environment variable, in the same shape.
 */

/** A provider's name in URLs: its callback is `/oauth/oidc/{slug}`. */
export const OidcSlug = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes, starting with a letter or digit');

/** Toolport roles a claim value can give, by name. */
export const OidcRoleName = z.enum(['user', 'admin']);
export type OidcRoleName = z.infer<typeof OidcRoleName>;

/**
 * What one value of the roles claim gives: a role, and places on the access lists of services and groups
 * (by name). A bare role name is short for `{ role }`. The key `*` applies to everyone the provider signs in.
 */
export const OidcGrant = z.union([
  OidcRoleName,
  z
    .object({
      role: OidcRoleName.optional(),
      services: z.array(z.string().min(1).max(200)).max(200).optional(),
      groups: z.array(z.string().min(1).max(200)).max(200).optional(),
    })
    .strict(),
]);
export type OidcGrant = z.infer<typeof OidcGrant>;

const httpsOrLoopbackUrl = z
  .string()
  .trim()
  .max(500)
  .refine((v) => {
    try {
      const url = new URL(v);
      return (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without query or fragment');

export const OidcProviderSettings = z
  .object({
    slug: OidcSlug,
    label: z.string().trim().min(1).max(64),
    /** The issuer; its discovery document is `{issuer}/.well-known/openid-configuration`. */
    issuer: httpsOrLoopbackUrl,
    client_id: z.string().trim().min(1).max(256),
    client_secret: z.string().max(2048).default(''),
    scopes: z.string().trim().max(500).default('openid email profile'),
    /** Whether someone the provider vouches for, unknown to Toolport, gets a new account. */
    allow_signup: z.boolean().default(false),
    /** The claim whose values (a string or an array of strings) `role_map` maps, e.g. `groups` or `roles`. */
    roles_claim: z.string().trim().max(200).default(''),
    role_map: z.record(z.string().min(1).max(200), OidcGrant).default({}),
    /** An image URL (https or data:) shown on the sign-in button. */
    icon: z.string().trim().max(4096).default(''),
    enabled: z.boolean().default(true),
    /**
     * What a console refresh does when the provider no longer vouches for the person (decision 0063): `off` asks
     * nothing; `sign_out` ends their sessions; `disable` also disables an account that signs in only through
     * this provider. Toolport keeps the provider's tokens (encrypted) only when this is not `off`.
     */
    deprovision: z.enum(['off', 'sign_out', 'disable']).default('off'),
    /**
     * Microsoft Entra ID `common` / `organizations`: the tenants (`tid`) whose people may sign in; empty lets any
     * tenant's in. Only a provider whose issuer is a `{tenantid}` template reads it.
     */
    allowed_tenants: z.array(z.string().trim().min(1).max(64)).max(200).default([]),
  })
  .strict();
export type OidcProviderSettings = z.infer<typeof OidcProviderSettings>;
export type OidcProviderInput = z.input<typeof OidcProviderSettings>;

/** A list of providers whose slugs differ. */
export const OidcProviderList = z
  .array(OidcProviderSettings)
  .max(20)
  .refine((list) => new Set(list.map((p) => p.slug)).size === list.length, 'two providers have the same slug');

/** What anyone may read about a provider before signing in. */
export const OidcPublicProvider = z.object({
  slug: z.string(),
  label: z.string(),
  icon: z.string(),
  /** The return address to register at the provider. */
  redirect_uri: z.string(),
});
export type OidcPublicProvider = z.infer<typeof OidcPublicProvider>;

export const OidcSlugParams = z.object({ slug: OidcSlug });
export type OidcSlugParams = z.infer<typeof OidcSlugParams>;

/** A provider key as identities store it: `github`, `google` or `oidc:{slug}`. */
export const IdentityProvider = z
  .string()
  .trim()
  .max(64)
  .regex(/^(github|google|oidc:[a-z0-9][a-z0-9-]{0,39})$/, 'github, google or oidc:{slug}');

/** One provider identity linked to an account, as an administrator sees it (decision 0063). */
export const LinkedIdentity = z.object({
  id: z.number().int(),
  /** `github`, `google` or `oidc:{slug}`. */
  provider: z.string(),
  /** The provider's name as people read it (the slug when the provider is no longer configured). */
  provider_label: z.string(),
  /** The provider's id of the person (`sub` for OpenID Connect). */
  subject: z.string(),
  email: z.string(),
  created_at: z.number().int(),
});
export type LinkedIdentity = z.infer<typeof LinkedIdentity>;

/** Why a provider sign-in waits for an administrator. */
export const HeldReason = z.enum(['email_unverified', 'email_ambiguous', 'signup_closed']);
export type HeldReason = z.infer<typeof HeldReason>;

/** A provider sign-in that was refused until an administrator links it to an account (decision 0063). */
export const HeldIdentity = z.object({
  id: z.number().int(),
  provider: z.string(),
  provider_label: z.string(),
  subject: z.string(),
  /** The address the provider gave, verified or not. */
  email: z.string(),
  display_name: z.string(),
  reason: HeldReason,
  /** The account whose email matched, when one did: a suggestion, never applied by itself. */
  user_id: z.number().int().nullable(),
  /** That account's username ('' when none). */
  user_username: z.string(),
  attempts: z.number().int(),
  created_at: z.number().int(),
  last_seen_at: z.number().int(),
});
export type HeldIdentity = z.infer<typeof HeldIdentity>;

/** `POST /user/:id/identities`: the provider and the person's id there (a held sign-in's, or typed by the admin). */
export const LinkIdentityRequest = z.object({
  provider: IdentityProvider,
  subject: z.string().trim().min(1).max(255),
});
export type LinkIdentityRequest = z.infer<typeof LinkIdentityRequest>;

export const UserIdentityParams = z.object({
  id: z.coerce.number().int().positive().max(2_147_483_647),
  identityId: z.coerce.number().int().positive().max(2_147_483_647),
});
export const HeldIdentityParams = z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) });
