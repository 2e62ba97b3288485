import { type UpstreamOAuthResult, upstreamOAuthResults } from '@toolport/contract';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { Button } from '../../components/ui/button';
import { Card, CardContent } from '../../components/ui/card';
import { useDocumentTitle } from '../../lib/use-document-title';

/**
 * /oauth/upstream: where the server's OAuth callback sends the browser once a service's provider has
 * answered (issue 19). Says the result in the console's language; nothing here holds a token.
 */
export function OAuthResultPage() {
  const { t } = useTranslation('services');
  const [params] = useSearchParams();
  const raw = params.get('result') ?? '';
  const result: UpstreamOAuthResult = (upstreamOAuthResults as readonly string[]).includes(raw)
    ? (raw as UpstreamOAuthResult)
    : 'invalid_state';
  const service = params.get('service') ?? '';
  const reason = params.get('reason') ?? '';
  useDocumentTitle(t('oauth.result.title'));
  return (
    <div className="mx-auto max-w-xl p-4">
      <Card>
        <CardContent className="space-y-4 p-6">
          <h1 className="text-lg font-semibold">{t('oauth.result.title')}</h1>
          <p role={result === 'connected' ? 'status' : 'alert'} data-testid="oauth-result">
            {t(`oauth.result.${result}`, { service, reason })}
          </p>
          <Button asChild variant="outline">
            <Link to="/services">{t('oauth.result.back')}</Link>
          </Button>
        </CardContent>
      </Card>
    </div>
  );
}
