import type { ClientCapabilities, JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';

type Answer = JSONRPCResponse | JSONRPCError;

interface Waiting {
  resolve(answer: Answer): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

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

/**
 * The server-to-client requests one session has sent its client and not seen answered: each gets an
 * id of the gateway's (the upstream's own would collide between upstreams, and tell the client
 * nothing), and the client's answer, POSTed back like any message, is matched here by that id.
 */
export class ClientRequests {
  private next = 0;
  private readonly waiting = new Map<string, Waiting>();

  constructor(private readonly prefix: string) {}

  get size(): number {
    return this.waiting.size;
  }

  /**
   * Writes `message` under a fresh id with `write` (false: nowhere to write it) and waits for the
   * client's answer, at most `timeoutMs`.
   */
  send(message: JSONRPCRequest, write: (json: string) => boolean, timeoutMs: number): Promise<Answer> {
    this.next += 1;
    const id = `${this.prefix}-${this.next}`;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the client did not answer ${message.method} within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      timer.unref();
      this.waiting.set(id, { resolve, reject, timer });
      if (!write(JSON.stringify({ ...message, id }))) {
        clearTimeout(timer);
        this.waiting.delete(id);
        reject(new Error('the client has no open stream to receive it'));
      }
    });
  }

  /** A response the client POSTed: true when it answered one of ours. */
  answer(message: { id?: RequestId | null }): boolean {
    const id = typeof message.id === 'string' ? message.id : undefined;
    const waiting = id === undefined ? undefined : this.waiting.get(id);
    if (!waiting || id === undefined) return false;
    this.waiting.delete(id);
    clearTimeout(waiting.timer);
    waiting.resolve(message as Answer);
    return true;
  }

  /** The session ended: nobody will answer. */
  rejectAll(reason: string): void {
    for (const [id, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(id);
      waiting.reject(new Error(reason));
    }
  }
}
