import { describe, expect, it } from 'vitest';
import { meaningfulTail, StderrLog } from './stderr-log.js';

/** What real tools print when they fail at start, as they print it. */
const NODE_MISSING_MODULE = `node:internal/modules/cjs/loader:1210
  throw err;
  ^

Error: Cannot find module '/nonexistent/server.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Module._load (node:internal/modules/cjs/loader:1038:27)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2`;

const NODE_THROW = `Starting acme MCP server...
Loading configuration from /srv/acme/config.json
/srv/acme/dist/index.js:12
    throw new Error('ACME_TOKEN is not set');
    ^

Error: ACME_TOKEN is not set
    at main (/srv/acme/dist/index.js:12:11)
    at Object.<anonymous> (/srv/acme/dist/index.js:20:1)

Node.js v20.20.2`;

const PYTHON = `Traceback (most recent call last):
  File "/srv/acme/server.py", line 1, in <module>
    import foo
ModuleNotFoundError: No module named 'foo'`;

const NPM_404 = `npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/acme-nope - Not found
npm error 404
npm error 404  'acme-nope@*' is not in this registry.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-01-01T00_00_00_000Z-debug-0.log`;

const EVERYTHING_USAGE = `-----------------------------------------------------
  Everything Server Launcher
  Usage: node ./index.js [stdio|sse|streamableHttp]
  Default transport: stdio
-----------------------------------------------------
Unknown transport: no-such-transport`;

describe('the meaningful tail of a failed start', () => {
  const tail = (text: string) => meaningfulTail(text.split('\n'));

  it('keeps the error and leaves out the frames, the source excerpt, the object dump and the trailer', () => {
    expect(tail(NODE_MISSING_MODULE)).toEqual(["Error: Cannot find module '/nonexistent/server.js'"]);
    expect(tail(NODE_THROW)).toEqual(['Error: ACME_TOKEN is not set']);
    expect(tail(PYTHON)).toEqual(["ModuleNotFoundError: No module named 'foo'"]);
    expect(tail('/bin/sh: 1: acme-server: not found')).toEqual(['/bin/sh: 1: acme-server: not found']);
    // server-everything with a transport it does not know: its banner's rules and indented usage left out.
    expect(tail(EVERYTHING_USAGE)).toEqual(['Unknown transport: no-such-transport']);
  });

  it('keeps up to five lines of a tool that explains itself over several', () => {
    expect(tail(NPM_404)).toEqual([
      'npm error code E404',
      'npm error 404 Not Found - GET https://registry.npmjs.org/acme-nope - Not found',
      "npm error 404  'acme-nope@*' is not in this registry.",
      'npm error 404 Note that you can also install from a',
      'npm error 404 tarball, folder, http url, or git url.',
    ]);
    // Nothing that looks like an error: the last lines as they are.
    expect(tail('fixture: crashing at start\nlast words without a newline')).toEqual([
      'fixture: crashing at start',
      'last words without a newline',
    ]);
  });

  it('is bounded: at most 1,000 characters, a single long line cut', () => {
    const long = `Error: ${'x'.repeat(5_000)}`;
    const [only] = tail(long);
    expect(only?.length).toBe(1_001);
    expect(only?.endsWith('…')).toBe(true);
    expect(tail(Array.from({ length: 20 }, (_, i) => `error ${i} ${'y'.repeat(300)}`).join('\n')).join('\n').length).toBeLessThanOrEqual(
      1_000,
    );
    expect(tail('')).toEqual([]);
  });
});

describe('the stderr of a tool server in the service log', () => {
  const logOf = () => {
    const entries: { level: string; message: string }[] = [];
    return { entries, log: new StderrLog((level, message) => entries.push({ level, message }), 20) };
  };

  it('writes what a failed start printed as one entry, in order, at Error level, and says why from it', () => {
    const { entries, log } = logOf();
    for (const line of NODE_MISSING_MODULE.split('\n')) log.line(line);
    expect(log.reason()).toBe("Error: Cannot find module '/nonexistent/server.js'");
    log.end(true);
    expect(entries).toEqual([{ level: 'error', message: NODE_MISSING_MODULE }]);
  });

  it('ends an entry when the process speaks, and gives as its last words only what it wrote since', () => {
    const { entries, log } = logOf();
    log.line('acme server running on stdio');
    log.spoke();
    expect(entries).toEqual([{ level: 'info', message: 'acme server running on stdio' }]);
    expect(log.reason()).toBe('');
    log.line('warning: slow disk');
    log.end(false);
    expect(entries.at(-1)).toEqual({ level: 'warn', message: 'warning: slow disk' });
  });

  it('lets a crash’s long trace through whole, then limits a flood and says how much it left out', () => {
    const { entries, log } = logOf();
    const lines = Array.from({ length: 1_000 }, (_, i) => `line ${i}`);
    for (const line of lines) log.line(line);
    log.end(true);
    const written = entries.filter((e) => !e.message.endsWith('suppressed')).flatMap((e) => e.message.split('\n'));
    const suppressed = entries.map((e) => Number(/^(\d+) stderr lines suppressed$/.exec(e.message)?.[1] ?? 0)).reduce((a, b) => a + b);
    // A burst of ten seconds' worth (200 lines) is written whole, then about 20 a second; in order, in entries of at
    // most 60 lines, and every line left out is counted.
    expect(written.slice(0, 200)).toEqual(lines.slice(0, 200));
    expect(written.map((l) => Number(l.slice(5)))).toEqual([...written.map((l) => Number(l.slice(5)))].sort((a, b) => a - b));
    expect(written.length).toBeLessThan(1_000);
    expect(written.length + suppressed).toBe(1_000);
    expect(entries.every((e) => e.message.split('\n').length <= 60)).toBe(true);
  });
});
