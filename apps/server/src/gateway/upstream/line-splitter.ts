/** How much of a dropped line is kept for its report (a JSON-RPC id usually comes first). */
const HEAD_BYTES = 512;

/** The first HEAD_BYTES of a line held in `parts` and then `piece`, copying no more than that. */
function headOf(parts: Buffer[], piece: Buffer): string {
  const taken: Buffer[] = [];
  let size = 0;
  for (const part of [...parts, piece]) {
    if (size >= HEAD_BYTES) break;
    const slice = part.subarray(0, HEAD_BYTES - size);
    taken.push(slice);
    size += slice.length;
  }
  return Buffer.concat(taken).toString('utf8');
}

/**
 * Splits a byte stream into newline-terminated lines (stdio JSON-RPC framing). A line longer than
 * `maxBytes` is dropped whole, up to its newline, and reported with its first bytes and its last
 * `maxBytes` (its tail: a message written after output that lacked its newline ends up there, glued
 * to it), so a runaway writer costs at most about twice `maxBytes` of memory.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  /** Inside an oversized line: skip bytes until its newline, keeping only the last maxBytes. */
  private discarding = false;
  private discarded = 0;
  private head = '';
  private tail: Buffer[] = [];
  private tailSize = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (bytes: number, head: string, tail: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.endLine(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** The stream ended: a last line without its newline is still a line. */
  end(): void {
    if (this.discarding || this.size > 0) this.endLine(Buffer.alloc(0));
  }

  /** Keeps the last maxBytes of an oversized line (whole chunks: at most one chunk more). */
  private keepTail(piece: Buffer): void {
    this.tail.push(piece);
    this.tailSize += piece.length;
    while (this.tail.length > 1 && this.tailSize - (this.tail[0]?.length ?? 0) >= this.maxBytes) {
      this.tailSize -= this.tail.shift()?.length ?? 0;
    }
  }

  private keep(piece: Buffer): void {
    if (this.discarding) {
      this.discarded += piece.length;
      this.keepTail(piece);
      return;
    }
    if (this.size + piece.length > this.maxBytes) {
      this.discarding = true;
      this.discarded = this.size + piece.length;
      this.head = headOf(this.parts, piece);
      for (const part of this.parts) this.keepTail(part);
      this.keepTail(piece);
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private endLine(piece: Buffer): void {
    if (this.discarding) {
      this.discarding = false;
      const head = this.head;
      this.keepTail(piece);
      const tail = Buffer.concat(this.tail);
      this.head = '';
      this.tail = [];
      this.tailSize = 0;
      this.onOversize(this.discarded + piece.length, head, tail.subarray(Math.max(0, tail.length - this.maxBytes)));
      this.discarded = 0;
      return;
    }
    if (this.size + piece.length > this.maxBytes) {
      const whole = Buffer.concat([...this.parts, piece]);
      this.onOversize(whole.length, headOf(this.parts, piece), whole.subarray(whole.length - this.maxBytes));
      this.parts = [];
      this.size = 0;
      return;
    }
    const bytes = this.size === 0 ? piece : Buffer.concat([...this.parts, piece]);
    this.parts = [];
    this.size = 0;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    if (end > 0) this.onLine(bytes.toString('utf8', 0, end));
  }
}
