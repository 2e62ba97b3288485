import { SwitchOptionCard } from './switch-option-card';

/**
 * The audit trail's copy in the server log (AuditLogForwarding, off by default): each entry also becomes one
 * `audit` line of the log stream, for a SIEM that reads it. The trail itself is always kept.
 */
export function AuditForwardingCard({ saved }: { saved: boolean }) {
  return (
    <SwitchOptionCard
      option="AuditLogForwarding"
      saved={saved}
      text={{
        title: 'audit.title',
        description: 'audit.description',
        label: 'audit.forwarding',
        hint: 'audit.forwardingHint',
        turnedOn: 'audit.forwardingOn',
        turnedOff: 'audit.forwardingOff',
      }}
    />
  );
}
