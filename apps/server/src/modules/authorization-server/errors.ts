import type { MessageKey, MessageParams } from '../../i18n/index.js';

/** The error codes the OAuth RFCs name (RFC 6749 §5.2, 7591 §3.2.2, 8707 §2, 6750 §3.1). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_target'
  | 'invalid_scope'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'server_error'
  | 'temporarily_unavailable';

/**
 * A refusal in the OAuth wire format: `{error, error_description}` with the RFC's code for clients to
 * act on and a description in the caller's language (en or zh-CN) for people. Never a 500.
 */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly key: MessageKey,
    readonly params: MessageParams = {},
    readonly status = code === 'invalid_client' ? 401 : 400,
    /** Untranslated detail appended after a colon (the address a fetch refused, say). */
    readonly detail = '',
  ) {
    super(`${code}: ${key}`);
  }
}
