import { SwitchOptionCard } from './switch-option-card';

/**
 * Whether remote (SSE and streamable HTTP) services, and the redirects they answer with, may point at
 * loopback, private and link-local addresses (AllowPrivateNetworkUpstreams, on by default). Saved as
 * soon as it is flipped; the server refuses such addresses at creation and at connect while it is off.
 */
export function RemoteServicesCard({ saved }: { saved: boolean }) {
  return (
    <SwitchOptionCard
      option="AllowPrivateNetworkUpstreams"
      saved={saved}
      text={{
        title: 'remote.title',
        description: 'remote.description',
        label: 'remote.allowPrivate',
        hint: 'remote.allowPrivateHint',
        turnedOn: 'remote.allowed',
        turnedOff: 'remote.refused',
      }}
    />
  );
}
