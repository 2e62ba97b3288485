import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { errorText } from './channel.js';
import type { LinkMode, Multiplexer, Pending } from './multiplexer.js';
import { errorResponse, GatewayErrorCode } from './request-table.js';

export interface RelayHost {
  mode: LinkMode;
  /** Serves several users' sessions on one connection (decision 0042). */
  manyUsers: boolean;
  mux: Pick<Multiplexer, 'sessions' | 'inFlight'>;
  /** Writes an answer upstream, best effort. */
  post(message: JSONRPCMessage): void;
  callTimeoutMs(): number;
  log(level: 'info', message: string): void;
}

/**
 * The upstream's requests to its client on a connection of the 2025-11-25 era (sampling, elicitation, roots, ping):
 * to whom each goes, or why it is answered here, and how each relayed one is withdrawn.
 */
export class ServerRequestRelay {
  /** The upstream's requests relayed to a client and not answered yet, by the upstream's id: how to withdraw each. */
  private readonly pending = new Map<RequestId, AbortController>();
  /** The service log said once for this connection why its roots/list got no roots. */
  private rootsNoted = false;

  constructor(private readonly host: RelayHost) {}

  get size(): number {
    return this.pending.size;
  }

  /** A fresh connection: the roots note is said again once. */
  connectionOpened(): void {
    this.rootsNoted = false;
  }

  /** The upstream withdrew one of its requests (`notifications/cancelled`). */
  withdraw(id: RequestId, reason: string): void {
    this.pending.get(id)?.abort(reason);
  }

  /**
   * A request from the upstream to its client (docs/architecture.md §4). It goes to the client that caused
   * it: the client request it names or the sole one that can have caused it (`origin`, Multiplexer.originOf),
   * or the one session of an isolated link; that client must have declared the capability. `roots/list` on a
   * link several users share is answered here (answerRootsItself). Anything else is answered with an
   * error saying why, never sent to a client that did not cause it. `ping` is answered here on a
   * shared link (the gateway is the upstream's peer there) and relayed on an isolated one.
   */
  relay(request: JSONRPCRequest, origin: Pending | undefined): void {
    const [only] = this.host.mode === 'session' && this.host.mux.sessions.size === 1 ? this.host.mux.sessions.values() : [];
    const session = origin?.session ?? only;
    const refuse = (code: number, message: string) => this.host.post(errorResponse(request.id, code, message));
    if (request.method === 'ping' && (this.host.mode === 'shared' || !session?.request)) {
      this.host.post({ jsonrpc: '2.0', id: request.id, result: {} });
      return;
    }
    if (request.method === 'roots/list' && this.host.manyUsers) {
      this.answerRootsItself(request.id);
      return;
    }
    if (!session) {
      const n = this.host.mux.inFlight;
      const why =
        n === 0
          ? 'no client request is in flight on this shared connection'
          : n === 1
            ? "other users' calls have run on this shared connection and the request names no call"
            : `${n} client requests are in flight on this shared connection and the request names none of them`;
      refuse(
        GatewayErrorCode.NotRelayed,
        `${request.method} cannot be relayed to a client: ${why}, so the gateway cannot tell which client it is for (an isolated service relays every such request)`,
      );
      return;
    }
    const refusal = session.refuses?.(request);
    if (refusal) {
      refuse(GatewayErrorCode.MethodNotFound, `${request.method} is not available: ${refusal}`);
      return;
    }
    const timeoutMs = this.host.callTimeoutMs();
    const relay = origin?.sink.request ?? session.request?.bind(session);
    if (!relay) {
      refuse(GatewayErrorCode.MethodNotFound, `${request.method} is not available: the client cannot receive requests`);
      return;
    }
    // The upstream may withdraw it (notifications/cancelled), and a connection that ends takes it along.
    const withdrawal = new AbortController();
    this.pending.get(request.id)?.abort('the tool server sent another request under the same id');
    this.pending.set(request.id, withdrawal);
    const settled = () => {
      if (this.pending.get(request.id) === withdrawal) this.pending.delete(request.id);
    };
    relay(request, timeoutMs, withdrawal.signal).then(
      (answer) => {
        settled();
        this.host.post({ ...answer, id: request.id } as JSONRPCMessage);
      },
      (err) => {
        settled();
        // Withdrawn: a cancelled request gets no answer (MCP cancellation).
        if (withdrawal.signal.aborted) return;
        if (request.method === 'ping') this.host.post({ jsonrpc: '2.0', id: request.id, result: {} });
        else refuse(GatewayErrorCode.NotRelayed, `${request.method} could not be relayed to the client: ${errorText(err)}`);
      },
    );
  }

  /**
   * `roots/list` on a connection several users share: a server keeps the roots it is given as its process's
   * state (server-everything does) and would show one client's roots to every other user's call. The
   * gateway answers for itself, as the upstream's client: it has no roots (decision 0042).
   */
  private answerRootsItself(id: RequestId): void {
    this.host.post({ jsonrpc: '2.0', id, result: { roots: [] } });
    if (this.rootsNoted) return;
    this.rootsNoted = true;
    this.host.log(
      'info',
      "roots/list answered with no roots: this tool server is shared by several users, so no client's roots are passed to it (isolate the service per session to pass them)",
    );
  }

  /** Requests of an upstream connection that is gone: their clients are told they are withdrawn. */
  withdrawAll(reason: string): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const each of all) each.abort(reason);
  }
}
