import { SwitchOptionCard } from './switch-option-card';

/**
 * MCP clients signing in with OAuth: whether unknown clients may register themselves (dynamic client
 * registration, OAuthClientRegistrationEnabled, on by default). Clients known by a Client ID Metadata
 * Document need no registration and keep working when it is off.
 */
export function McpClientSignInCard({ saved }: { saved: boolean }) {
  return (
    <SwitchOptionCard
      option="OAuthClientRegistrationEnabled"
      saved={saved}
      text={{
        title: 'mcpClients.title',
        description: 'mcpClients.description',
        label: 'mcpClients.registration',
        hint: 'mcpClients.registrationHint',
        turnedOn: 'mcpClients.registrationOn',
        turnedOff: 'mcpClients.registrationOff',
      }}
    />
  );
}
