import { Textarea } from '../../components/ui/textarea';
import { planAllowedOrigins } from './preference-rules';
import { TextOptionCard } from './text-option-card';

/**
 * Browser-based MCP clients on other sites (AllowedOrigins): the origins whose pages may call the
 * gateway's MCP endpoints, one per line. The gateway answers their CORS preflights and refuses every
 * other origin with 403 (docs/security.md, "DNS rebinding and browser clients"). ALLOWED_ORIGINS adds
 * to this list from the environment.
 */
export function AllowedOriginsCard({ saved }: { saved: string }) {
  return (
    <TextOptionCard
      option="AllowedOrigins"
      saved={saved}
      section="origins"
      plan={(text) => {
        const plan = planAllowedOrigins(text);
        return plan.ok ? plan : { ok: false, problem: (t) => t('origins.notAnOrigin', { entry: plan.entry }) };
      }}
      field={({ onChange, ...props }) => (
        <Textarea rows={3} spellCheck={false} placeholder="https://app.example.com" {...props} onChange={(e) => onChange(e.target.value)} />
      )}
    />
  );
}
