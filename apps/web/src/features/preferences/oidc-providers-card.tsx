import { Textarea } from '../../components/ui/textarea';
import { TextOptionCard } from './text-option-card';

/** The stored document, indented for reading; anything unreadable is shown as it is. */
export function prettyProviders(saved: string): string {
  if (!saved) return '';
  try {
    return JSON.stringify(JSON.parse(saved), null, 2);
  } catch {
    return saved;
  }
}

/**
 * OpenID Connect sign-in providers (OIDCProviders, docs/oidc.md): a JSON array, checked by the server field by
 * field. Client secrets come back as ******** and are kept when saved unchanged; providers set by the
 * OIDC_PROVIDERS variable are not part of this document.
 */
export function OidcProvidersCard({ saved }: { saved: string }) {
  return (
    <TextOptionCard
      option="OIDCProviders"
      saved={prettyProviders(saved)}
      section="oidc"
      plan={(text) => {
        const trimmed = text.trim();
        if (trimmed === '') return { ok: true, value: '' };
        try {
          const parsed: unknown = JSON.parse(trimmed);
          if (!Array.isArray(parsed)) return { ok: false, problem: (t) => t('oidc.notAList') };
          return { ok: true, value: JSON.stringify(parsed) };
        } catch {
          return { ok: false, problem: (t) => t('oidc.notJson') };
        }
      }}
      field={({ onChange, ...props }) => (
        <Textarea
          rows={12}
          spellCheck={false}
          className="font-mono text-xs"
          placeholder={
            '[\n  {\n    "slug": "corp",\n    "label": "Company SSO",\n    "issuer": "https://sso.example.com/realms/corp",\n    "client_id": "toolport",\n    "client_secret": "…",\n    "allow_signup": true\n  }\n]'
          }
          {...props}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    />
  );
}
