import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, logDestination, redactUrl } from './logger.js';

/** A logger writing into an array, so a test can read exactly what would reach the log. */
function capture() {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  return { logger, text: () => lines.join(''), entries: () => lines.map((l) => JSON.parse(l)) };
}

describe('log redaction', () => {
  it('writes a request line without the ?key= value or the Authorization header', () => {
    const { logger, text, entries } = capture();
    logger.info(
      {
        req: { method: 'GET', url: '/proxy/files/sse?key=tpk_secret-api-key&debug=1', headers: { authorization: 'Bearer secret-jwt' } },
        headers: { authorization: 'Bearer secret-jwt' },
      },
      'request',
    );
    expect(text()).not.toContain('tpk_secret-api-key');
    expect(text()).not.toContain('secret-jwt');
    const [entry] = entries();
    expect(entry.req.url).toBe('/proxy/files/sse?key=[REDACTED]&debug=1');
    expect(entry.headers.authorization).toBe('[REDACTED]');
  });

  it('redacts passwords and tokens nested one level down', () => {
    const { logger, text } = capture();
    logger.info({ body: { username: 'root', password: 'pw-value-1', refresh_token: 'rt-value-2' }, token: 'tk-value-3' }, 'sign-in');
    for (const secret of ['pw-value-1', 'rt-value-2', 'tk-value-3']) expect(text()).not.toContain(secret);
    expect(text()).toContain('root');
  });
});

describe('redactUrl', () => {
  it('hides key, token, code and access_token query values wherever they appear', () => {
    expect(redactUrl('/a?key=k1')).toBe('/a?key=[REDACTED]');
    expect(redactUrl('/a?x=1&token=t1&code=c1#frag')).toBe('/a?x=1&token=[REDACTED]&code=[REDACTED]#frag');
    expect(redactUrl('/a?ACCESS_TOKEN=t2')).toBe('/a?ACCESS_TOKEN=[REDACTED]');
  });

  it('leaves parameters that only end in "key" alone', () => {
    expect(redactUrl('/a?monkey=banana&page=2')).toBe('/a?monkey=banana&page=2');
  });
});

describe('log format (LOG_FORMAT)', () => {
  const prettyLines = (isTty: boolean) => {
    let text = '';
    const out = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    const destination = logDestination('pretty', isTty, out);
    if (!destination) throw new Error('no pretty destination');
    const logger = createLogger('info', destination);
    logger.info({ service: 'toolport', req: { method: 'GET', url: '/proxy/x/sse?key=tpk_hidden' } }, 'Toolport is listening');
    return text;
  };

  it('writes JSON lines unless asked for readable ones or writing to a terminal', () => {
    expect(logDestination('json', true)).toBeUndefined();
    expect(logDestination(undefined, false)).toBeUndefined();
    expect(logDestination(undefined, true)).toBeDefined();
  });

  it('writes readable lines, coloured only for a terminal, still redacted', () => {
    const plain = prettyLines(false);
    expect(plain).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: Toolport is listening/);
    expect(plain).not.toContain('tpk_hidden');
    expect(plain).not.toContain('\u001b[');
    expect(prettyLines(true)).toContain('\u001b[');
  });
});
