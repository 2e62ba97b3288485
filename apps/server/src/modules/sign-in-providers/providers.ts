import type { OAuthProvider } from '@toolport/contract';
import type { Config } from '../../config.js';
import { githubClient } from './github.js';
import { googleClient } from './google.js';
import type { ProviderClient } from './provider-client.js';

/** Endpoints come from configuration, so tests (and GitHub Enterprise) can point elsewhere. */
export function providerClients(oauth: Config['oauth']): Record<OAuthProvider, ProviderClient> {
  return {
    github: githubClient({ baseUrl: oauth.githubBaseUrl, apiUrl: oauth.githubApiUrl }),
    google: googleClient({ authUrl: oauth.googleAuthUrl, tokenUrl: oauth.googleTokenUrl, userinfoUrl: oauth.googleUserinfoUrl }),
  };
}
