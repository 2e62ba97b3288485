import type { JSONRPCNotification, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';

/** The syslog severities of MCP logging (RFC 5424), least severe first. */
const ORDER: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const rank = (level: unknown): number => ORDER.indexOf(level as LoggingLevel);

/**
 * `logging/setLevel` per session on one upstream (docs/architecture.md §4). The upstream can hold one level,
 * so it is set to the most verbose any attached session asked for, and each session's log messages
 * are filtered here at its own level. A session that never chose one gets what it got before anyone
 * did: everything while the upstream keeps its own default, and `info` and above once another session
 * has made the upstream more talkative (an upstream's default is not known, `info` is the usual one).
 */
export class LogLevels {
  private readonly bySession = new Map<string, LoggingLevel>();
  /** What the upstream was last set to by the gateway; undefined while nobody asked. */
  upstream: LoggingLevel | undefined;

  static isLevel(value: unknown): value is LoggingLevel {
    return rank(value) >= 0;
  }

  /** Records a session's level; returns the upstream's new level when it must change. */
  set(sessionId: string, level: LoggingLevel): LoggingLevel | undefined {
    this.bySession.set(sessionId, level);
    return this.retarget();
  }

  /**
   * The session left. The upstream keeps its level until the next setLevel (lowering it would need a
   * request to an upstream that may be stopping); the filter keeps every session at its own level.
   */
  drop(sessionId: string): void {
    this.bySession.delete(sessionId);
  }

  /** Whether a notification reaches this session: anything but a log message, or one at its level or above. */
  wants(sessionId: string, message: JSONRPCNotification): boolean {
    if (message.method !== 'notifications/message') return true;
    const level = this.bySession.get(sessionId) ?? (this.upstream ? 'info' : undefined);
    if (!level) return true;
    const severity = rank(message.params?.level);
    return severity < 0 || severity >= rank(level);
  }

  private retarget(): LoggingLevel | undefined {
    let most: LoggingLevel | undefined;
    for (const level of this.bySession.values()) if (!most || rank(level) < rank(most)) most = level;
    if (!most || most === this.upstream) return undefined;
    this.upstream = most;
    return most;
  }
}
