import type { OAuthProvider, StatusData } from '@toolport/contract';

/** The providers' names as the console shows them, in every language. */
export const providerNames: Record<OAuthProvider, string> = { github: 'GitHub', google: 'Google' };

/** A provider can be used when the server says it is switched on and has a client id (docs/console.md §5). */
export function providerEnabled(status: StatusData | undefined, provider: OAuthProvider): boolean {
  if (!status) return false;
  return provider === 'github' ? status.github_oauth && !!status.github_client_id : status.google_oauth && !!status.google_client_id;
}
