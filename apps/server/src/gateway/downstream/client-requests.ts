import type { ClientCapabilities, JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';

type Answer = JSONRPCResponse | JSONRPCError;

interface Waiting {
  resolve(answer: Answer): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  /** Stops listening for the request's withdrawal. */
  unlisten(): void;
}

/** The shape of a client-facing id of a clustered replica: `…@<replica id>`. */
const OWNER = /@([A-Za-z0-9_-]{12})$/;

/**
 * The replica that sent a server-to-client request, as its client-facing id names it (undefined on a
 * single instance, or for ids not of this gateway's making).
 */
export function replicaOfRequestId(id: unknown): string | undefined {
  return typeof id === 'string' && id.startsWith('toolport-') ? OWNER.exec(id)?.[1] : undefined;
}

/** The text of an abort reason. */
const reasonOf = (reason: unknown): string =>
  typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : 'cancelled';

/**
 * Why a client cannot take this server-to-client request, or undefined when it declared what it
 * needs in its initialize (a client that never said it samples must not be asked to). Elicitation
 * in URL mode needs `elicitation.url`; form mode needs `elicitation.form`, or a bare `elicitation`
 * (how clients before 2025-11-25 declare form support).
 */
export function refusalFor(capabilities: ClientCapabilities | undefined, message: JSONRPCRequest): string | undefined {
  const caps = capabilities ?? {};
  switch (message.method) {
    case 'ping':
      return undefined;
    case 'sampling/createMessage':
      return caps.sampling ? undefined : 'the client did not declare the sampling capability';
    case 'roots/list':
      return caps.roots ? undefined : 'the client did not declare the roots capability';
    case 'elicitation/create': {
      const elicitation = caps.elicitation as { form?: unknown; url?: unknown } | undefined;
      if (!elicitation) return 'the client did not declare the elicitation capability';
      const mode = (message.params as { mode?: unknown } | undefined)?.mode ?? 'form';
      if (mode === 'url') return elicitation.url ? undefined : 'the client did not declare URL-mode elicitation';
      const formOnly = elicitation.form === undefined && elicitation.url === undefined;
      return formOnly || elicitation.form ? undefined : 'the client did not declare form-mode elicitation';
    }
    default:
      return undefined;
  }
}

/** The capability a server-to-client request needs, in the shape of `requiredCapabilities` (-32021). */
export function requiredCapability(message: JSONRPCRequest): Record<string, unknown> {
  switch (message.method) {
    case 'sampling/createMessage':
      return { sampling: {} };
    case 'roots/list':
      return { roots: {} };
    case 'elicitation/create':
      return (message.params as { mode?: unknown } | undefined)?.mode === 'url'
        ? { elicitation: { url: {} } }
        : { elicitation: { form: {} } };
    default:
      return {};
  }
}

/**
 * The server-to-client requests one session has sent its client and not seen answered: each gets an
 * id of the gateway's (the upstream's own would collide between upstreams, and tell the client
 * nothing), and the client's answer, POSTed back like any message, is matched here by that id.
 */
export class ClientRequests {
  private next = 0;
  private readonly waiting = new Map<string, Waiting>();
  /**
   * Several replicas: this replica's id, written into each client-facing id (`<prefix>-<n>@<replica>`),
   * so that an answer POSTed to another replica can be passed back here (legacy-relay.ts).
   */
  replica: string | undefined;

  constructor(private readonly prefix: string) {}

  get size(): number {
    return this.waiting.size;
  }

  /**
   * Writes `message` under a fresh id with `write` (false: nowhere to write it) and waits for the
   * client's answer, at most `timeoutMs`. Aborting `signal` withdraws the request: the client is told
   * with `notifications/cancelled` under the id it knows (written with `write`, best effort) and the
   * promise rejects with the abort's reason.
   */
  send(message: JSONRPCRequest, write: (json: string) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<Answer> {
    this.next += 1;
    const id = this.replica ? `${this.prefix}-${this.next}@${this.replica}` : `${this.prefix}-${this.next}`;
    return new Promise<Answer>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new Error(reasonOf(signal.reason)));
        return;
      }
      const withdraw = () => {
        if (!this.settle(id)) return;
        const reason = reasonOf(signal?.reason);
        write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }));
        reject(new Error(reason));
      };
      const timer = setTimeout(() => {
        if (this.settle(id)) reject(new Error(`the client did not answer ${message.method} within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      timer.unref();
      signal?.addEventListener('abort', withdraw, { once: true });
      this.waiting.set(id, { resolve, reject, timer, unlisten: () => signal?.removeEventListener('abort', withdraw) });
      if (!write(JSON.stringify({ ...message, id }))) {
        this.settle(id);
        reject(new Error('the client has no open stream to receive it'));
      }
    });
  }

  /** Forgets a waiting request (answered, timed out, withdrawn); undefined when it was not waiting. */
  private settle(id: string): Waiting | undefined {
    const waiting = this.waiting.get(id);
    if (!waiting) return undefined;
    this.waiting.delete(id);
    clearTimeout(waiting.timer);
    waiting.unlisten();
    return waiting;
  }

  /** A response the client POSTed: true when it answered one of ours. */
  answer(message: { id?: RequestId | null }): boolean {
    const waiting = typeof message.id === 'string' ? this.settle(message.id) : undefined;
    if (!waiting) return false;
    waiting.resolve(message as Answer);
    return true;
  }

  /** The session ended: nobody will answer. */
  rejectAll(reason: string): void {
    for (const id of [...this.waiting.keys()]) this.settle(id)?.reject(new Error(reason));
  }
}
