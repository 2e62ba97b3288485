import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { ErrorAlert } from '../../components/ui/alert';
import { Card, CardContent, CardFooter, CardHeader } from '../../components/ui/card';
import { useDocumentTitle } from '../../lib/use-document-title';

/** The reasons the server names (its message keys, modules/oauth-server); anything else reads as the generic text. */
const REASONS = new Set([
  'unknown_client',
  'metadata_unusable',
  'redirect_mismatch',
  'fetch_rate_limited',
  'state_too_long',
  'response_type_code',
  'pkce_required',
  'pkce_s256',
  'bad_challenge',
  'one_resource',
  'bad_resource',
  'missing_param',
  'nul_character',
]);
/** The OAuth error codes (RFC 6749 §4.1.2.1, 8707) the authorization endpoint answers with. */
const CODES = new Set(['invalid_request', 'invalid_client', 'unsupported_response_type', 'invalid_target']);

/**
 * /oauth/error?error=…&reason=…: Toolport's own page for an authorization request it refuses without
 * sending the browser back to the app (an unknown client, an unregistered or untrusted redirect URI:
 * docs/decisions/0041-oauth-server-hostile-input.md). Public, in the reader's language; it shows only texts of
 * its own, chosen by the two parameters from fixed lists, never text from the link.
 */
export function OAuthErrorPage() {
  const { t } = useTranslation('auth');
  const [params] = useSearchParams();
  const reason = params.get('reason') ?? '';
  const code = params.get('error') ?? '';
  useDocumentTitle(t('oauthError.title'));
  return (
    <div className="flex justify-center py-4 sm:py-10">
      <Card className="w-full max-w-md">
        <CardHeader>
          <h1 className="text-xl font-semibold">{t('oauthError.title')}</h1>
        </CardHeader>
        <CardContent className="space-y-4">
          <ErrorAlert title={REASONS.has(reason) ? t(`oauthError.reasons.${reason}` as 'oauthError.generic') : t('oauthError.generic')}>
            {CODES.has(code) && (
              <span>
                {t('oauthError.code')}: <code className="font-mono">{code}</code>
              </span>
            )}
          </ErrorAlert>
          <p className="text-sm text-slate-600 dark:text-slate-400">{t('oauthError.next')}</p>
        </CardContent>
        <CardFooter className="justify-end">
          <Link to="/" className="text-sm font-medium underline underline-offset-4">
            {t('oauthError.home')}
          </Link>
        </CardFooter>
      </Card>
    </div>
  );
}
