import type { OAuthProvider, PublicUser, StatusData } from '@toolport/contract';
import { providerEnabled } from '../../lib/oauth-providers';

/** The providers a user can bind from the profile, in the order the card lists them. */
export const bindableProviders: readonly OAuthProvider[] = ['github', 'google'];

type MethodFields = Pick<PublicUser, 'login_method' | 'github_id' | 'google_id' | 'wechat_id'>;

/** The provider account bound to the user ('' when none): GitHub's numeric id, Google's subject. */
export const boundAccountOf = (user: MethodFields, provider: OAuthProvider): string =>
  provider === 'github' ? user.github_id : user.google_id;

/** A user with a password reports `login_method: 'password'`; one without signed up through a provider. */
export const hasPassword = (user: MethodFields): boolean => user.login_method === 'password';

/** How many ways the user has to sign in: the password and every bound provider (WeChat included). */
export function signInMethodCount(user: MethodFields): number {
  return [hasPassword(user), !!user.github_id, !!user.google_id, !!user.wechat_id].filter(Boolean).length;
}

/**
 * Whether unbinding `provider` would leave the account with no way to sign in (the server refuses it with
 * `last_sign_in_method`; the card disables the button and says why before anyone asks).
 */
export const isLastSignInMethod = (user: MethodFields, provider: OAuthProvider): boolean =>
  !!boundAccountOf(user, provider) && signInMethodCount(user) <= 1;

/**
 * The providers the card shows: those the server reports usable (switched on, with a client id), and any
 * the user is already bound to, so a binding stays visible (and removable) after a provider is switched off.
 */
export function visibleProviders(status: StatusData | undefined, user: MethodFields): OAuthProvider[] {
  return bindableProviders.filter((p) => providerEnabled(status, p) || !!boundAccountOf(user, p));
}
