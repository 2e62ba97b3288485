/**
 * Resource subscriptions of the sessions sharing one upstream: the upstream is subscribed to a URI
 * while at least one session is, and `notifications/resources/updated` reaches only the sessions
 * that subscribed to that URI.
 */
export class Subscriptions {
  private readonly byUri = new Map<string, Set<string>>();
  /** Forwarded subscribe requests not yet answered: request -> uri. */
  private readonly asking = new WeakMap<object, string>();

  /** Adds the session; true when it is the first subscriber, so the upstream must be asked. */
  subscribe(sessionId: string, uri: string): boolean {
    const sessions = this.byUri.get(uri);
    if (sessions) {
      sessions.add(sessionId);
      return false;
    }
    this.byUri.set(uri, new Set([sessionId]));
    return true;
  }

  /** Remembers the upstream subscribe request, so a refusal undoes the subscription. */
  asked(request: object, uri: string): void {
    this.asking.set(request, uri);
  }

  /** The upstream refused or never answered a subscribe: nobody is subscribed to that URI. */
  requestFailed(request: object): void {
    const uri = this.asking.get(request);
    if (uri === undefined) return;
    this.asking.delete(request);
    this.byUri.delete(uri);
  }

  /** Removes the session; true when it was the last subscriber, so the upstream must be told. */
  unsubscribe(sessionId: string, uri: string): boolean {
    const sessions = this.byUri.get(uri);
    if (!sessions?.delete(sessionId)) return false;
    if (sessions.size > 0) return false;
    this.byUri.delete(uri);
    return true;
  }

  /** Drops every subscription of a session; returns the URIs nobody is subscribed to any more. */
  dropSession(sessionId: string): string[] {
    const emptied: string[] = [];
    for (const [uri, sessions] of this.byUri) {
      if (sessions.delete(sessionId) && sessions.size === 0) {
        this.byUri.delete(uri);
        emptied.push(uri);
      }
    }
    return emptied;
  }

  subscribers(uri: string): Iterable<string> {
    return this.byUri.get(uri) ?? [];
  }

  /** Every subscribed URI: renewed on a fresh upstream connection. */
  uris(): string[] {
    return [...this.byUri.keys()];
  }
}
