/** One server-sent event: its `event` field ('' when absent) and its data lines joined. */
export interface SseEvent {
  event: string;
  data: string;
}

/** What reading an event stream found besides its events. */
export interface SseEnd {
  /** An event carried an `id`: the stream is resumable. */
  resumable: boolean;
  /** The stream broke (connection reset, aborted): the reason; undefined when it ended cleanly. */
  broken?: string;
}

/**
 * Reads an SSE body to its end, giving each complete event to `onEvent` in order. Any line end (CR, LF,
 * CRLF, split across chunks or not) ends a line; comment lines are skipped; an event not closed by a
 * blank line is incomplete and dropped. Never rejects: a stream that breaks ends the reading with
 * `broken` set. Shared by answer-guard.ts (which watches a tee of the SDK's streams) and
 * modern-remote-channel.ts (which reads its answers itself).
 */
export async function readSseEvents(body: ReadableStream<Uint8Array>, onEvent: (event: SseEvent) => void): Promise<SseEnd> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let eventType = '';
  let resumable = false;
  const dispatch = () => {
    const text = data.join('\n');
    const event = eventType;
    data = [];
    eventType = '';
    if (text !== '') onEvent({ event, data: text });
  };
  const line = (raw: string) => {
    if (raw === '') return dispatch();
    if (raw.startsWith(':')) return;
    const colon = raw.indexOf(':');
    const field = colon === -1 ? raw : raw.slice(0, colon);
    let value = colon === -1 ? '' : raw.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventType = value;
    else if (field === 'id' && value !== '') resumable = true;
  };
  const reader = body.getReader();
  const lineEnd = /\r\n|\r|\n/g;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        // The CR held back in case an LF followed ends its line after all.
        if (buffer.endsWith('\r')) line(buffer.slice(0, -1));
        break;
      }
      // Only the new text is searched for line ends: a large event arriving in many chunks costs one pass.
      // A CR at the very end may be the first half of a CRLF, so it is looked at again with what follows.
      const scanned = Math.max(0, buffer.length - 1);
      buffer += decoder.decode(value, { stream: true });
      lineEnd.lastIndex = scanned;
      let start = 0;
      for (let m = lineEnd.exec(buffer); m !== null; m = lineEnd.exec(buffer)) {
        if (m[0] === '\r' && m.index === buffer.length - 1) break;
        line(buffer.slice(start, m.index));
        start = m.index + m[0].length;
      }
      if (start > 0) buffer = buffer.slice(start);
      // A line without its end that keeps growing is bounded here.
      if (buffer.length > 16 * 1024 * 1024) buffer = buffer.slice(0, 1024);
    }
  } catch (err) {
    return { resumable, broken: err instanceof Error ? err.message : String(err) };
  }
  return { resumable };
}
