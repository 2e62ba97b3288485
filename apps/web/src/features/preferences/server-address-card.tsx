import { Input } from '../../components/ui/input';
import { normaliseServerAddress, serverAddressProblem } from './preference-rules';
import { TextOptionCard } from './text-option-card';

/**
 * The address users and providers reach the console at (docs/console.md §2.13), saved with its own button; the
 * result shows below the field rather than as a toast (§8). Saved without its trailing slash (§9).
 */
export function ServerAddressCard({ saved }: { saved: string }) {
  return (
    <TextOptionCard
      option="ServerAddress"
      saved={saved}
      section="serverAddress"
      inline
      plan={(text) => {
        const address = normaliseServerAddress(text);
        const problem = serverAddressProblem(address);
        return problem ? { ok: false, problem: (t) => t(problem) } : { ok: true, value: address };
      }}
      field={({ onChange, ...props }) => (
        <Input
          type="url"
          inputMode="url"
          autoComplete="url"
          placeholder="https://gateway.example.com"
          {...props}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    />
  );
}
