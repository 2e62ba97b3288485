/** Who the provider says signed in. `email` is empty unless the provider verified it. */
export interface ProviderProfile {
  id: string;
  /** What a new account's username is derived from. */
  login: string;
  displayName: string;
  email: string;
  /** An address the provider gave without vouching for it (OpenID Connect only): never used to link. */
  unverifiedEmail?: string;
  /** The values of the provider's roles claim (OpenID Connect only). */
  groups?: string[];
  /** What the token endpoint gave (OpenID Connect only), kept when the provider deprovisions at refresh. */
  tokens?: ProviderTokens;
}

/** A provider's tokens for one person: '' for one it did not give; `accessExpiresAt` 0 when unknown. */
export interface ProviderTokens {
  refresh: string;
  access: string;
  accessExpiresAt: number;
}

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  codeChallenge: string;
}

export interface ExchangeRequest {
  clientId: string;
  clientSecret: string;
  code: string;
  redirectUri: string;
  codeVerifier: string;
}

/** One provider's wire format: where to send the browser, how to swap the code, who signed in. */
export interface ProviderClient {
  /** The provider's name as people write it, used in messages. */
  readonly label: string;
  authorizeUrl(req: AuthorizeRequest): string;
  /** The access token for a code; a refusal by the provider is a 400 with its error shown. */
  exchangeCode(req: ExchangeRequest): Promise<string>;
  fetchProfile(accessToken: string): Promise<ProviderProfile>;
}
