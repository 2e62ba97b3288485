import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandLineError, packageBaseName, parseKeyValues, parseStdioCommand, SERVICE_NAME, slugFrom, tokenize } from './command-line.js';

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof CommandLineError) return err.reason;
    throw err;
  }
  return 'no error';
};

describe('tokenize', () => {
  it('splits on any whitespace and keeps quoted words whole', () => {
    expect(tokenize(`npx  -y\tpkg "two words" 'single quoted'`)).toEqual(['npx', '-y', 'pkg', 'two words', 'single quoted']);
  });

  it('joins adjacent quoted and bare parts into one word, and keeps empty quoted words', () => {
    expect(tokenize(`--name="a b"c '' ""`)).toEqual(['--name=a bc', '', '']);
  });

  it('takes single quotes literally and lets backslash escape inside double quotes and outside quotes', () => {
    expect(tokenize(`'a\\"b' "c\\"d\\\\e\\n" f\\ g`)).toEqual(['a\\"b', 'c"d\\e\\n', 'f g']);
  });

  it('refuses an unterminated quote', () => {
    expect(reasonOf(() => tokenize(`npx "pkg`))).toBe('unterminated_quote');
    expect(reasonOf(() => tokenize(`npx 'pkg`))).toBe('unterminated_quote');
  });
});

describe('parseStdioCommand', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolport-cmd-'));
  const exe = path.join(dir, 'my server');
  writeFileSync(exe, '#!/bin/sh\nexit 0\n');
  chmodSync(exe, 0o755);
  const plain = path.join(dir, 'not-executable');
  writeFileSync(plain, 'x');
  chmodSync(plain, 0o644);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads npx: package after the known flags, npm as manager, the rest as arguments', () => {
    expect(parseStdioCommand('npx -y @modelcontextprotocol/server-everything stdio')).toEqual({
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'],
      packageManager: 'npm',
      packageName: '@modelcontextprotocol/server-everything',
      packageVersion: '',
    });
    expect(parseStdioCommand('npx --registry https://r.example -y pkg@1.2.3')).toMatchObject({
      packageName: 'pkg',
      packageVersion: '1.2.3',
    });
    // A scoped name's leading @ is not a version separator.
    expect(parseStdioCommand('npx -y @modelcontextprotocol/server-everything@2026.8.31')).toMatchObject({
      packageName: '@modelcontextprotocol/server-everything',
      packageVersion: '2026.8.31',
    });
    expect(parseStdioCommand('npx --package=@scope/tools -y tool-bin').packageName).toBe('@scope/tools');
    expect(parseStdioCommand('npx -p @scope/tools tool-bin').packageName).toBe('@scope/tools');
  });

  it('reads uvx: uv as manager, --from names the package', () => {
    expect(parseStdioCommand('uvx mcp-server-fetch --ignore-robots-txt')).toMatchObject({
      command: 'uvx',
      packageManager: 'uv',
      packageName: 'mcp-server-fetch',
    });
    expect(parseStdioCommand('uvx --python 3.12 --from "mcp-server-time==1.0" mcp-server-time')).toMatchObject({
      packageName: 'mcp-server-time',
      packageVersion: '1.0',
    });
    expect(parseStdioCommand('uvx mcp-server-git@2025.1.14')).toMatchObject({ packageName: 'mcp-server-git', packageVersion: '2025.1.14' });
    // A range or extras pin nothing: the bare name, no version.
    expect(parseStdioCommand('uvx --from "mcp-proxy[cli]>=0.5" mcp-proxy')).toMatchObject({ packageName: 'mcp-proxy', packageVersion: '' });
  });

  it('keeps quoted arguments whole in the argument array', () => {
    expect(parseStdioCommand(`npx -y pkg --root "/srv/my files" --label 'a "b"'`).args).toEqual([
      '-y',
      'pkg',
      '--root',
      '/srv/my files',
      '--label',
      'a "b"',
    ]);
  });

  it('refuses npx or uvx without a package, other programs, relative paths and npx -c', () => {
    expect(reasonOf(() => parseStdioCommand('npx'))).toBe('no_package');
    expect(reasonOf(() => parseStdioCommand('npx -y --registry x'))).toBe('no_package');
    expect(reasonOf(() => parseStdioCommand('uvx --from'))).toBe('no_package');
    expect(reasonOf(() => parseStdioCommand('node server.js'))).toBe('not_allowed');
    expect(reasonOf(() => parseStdioCommand('./server'))).toBe('not_allowed');
    expect(reasonOf(() => parseStdioCommand('bash -c "rm -rf /"'))).toBe('not_allowed');
    expect(reasonOf(() => parseStdioCommand('npx -c "echo hi"'))).toBe('shell_flag');
    expect(reasonOf(() => parseStdioCommand('   '))).toBe('empty');
  });

  it('accepts the absolute path of an executable file (quoted when it has spaces) and nothing else', () => {
    expect(parseStdioCommand(`"${exe}" --port 1`)).toEqual({
      command: exe,
      args: ['--port', '1'],
      packageManager: '',
      packageName: '',
      packageVersion: '',
    });
    expect(reasonOf(() => parseStdioCommand(plain))).toBe('not_executable');
    expect(reasonOf(() => parseStdioCommand(path.join(dir, 'missing')))).toBe('not_executable');
    expect(reasonOf(() => parseStdioCommand(dir))).toBe('not_executable');
  });
});

describe('parseKeyValues', () => {
  it('reads KEY=VALUE lines, keeping "=" inside values and dropping lines without a key, a value or "="', () => {
    const text = 'API_KEY=abc=def==\n\nNO_EQUALS\n=novalue\nEMPTY=\n  SPACED = padded  \r\nURL=http://x/?a=1&b=2';
    expect(parseKeyValues(text)).toEqual({ API_KEY: 'abc=def==', SPACED: 'padded', URL: 'http://x/?a=1&b=2' });
  });

  it('accepts a JSON object, as an object or as text, dropping empty and nested values', () => {
    expect(parseKeyValues({ A: 'x', B: 2, C: '', D: { nested: true }, E: null })).toEqual({ A: 'x', B: '2' });
    expect(parseKeyValues('{"Authorization": "Bearer t=1"}')).toEqual({ Authorization: 'Bearer t=1' });
    expect(parseKeyValues(undefined)).toEqual({});
  });
});

describe('service names', () => {
  it('allows URL-safe names of 1 to 64 characters starting with a letter or digit', () => {
    for (const good of ['a', 'everything', 'my_server-2', '9lives', 'x'.repeat(64)]) expect(SERVICE_NAME.test(good), good).toBe(true);
    for (const bad of ['', '-x', '_x', 'a b', 'a/b', 'a.b', 'x'.repeat(65), 'ünïcode']) expect(SERVICE_NAME.test(bad), bad).toBe(false);
  });

  it('derives URL-safe names from packages, paths and hosts', () => {
    expect(packageBaseName('@modelcontextprotocol/server-everything@2.0.0')).toBe('server-everything');
    expect(packageBaseName('mcp-server-time==1.0')).toBe('mcp-server-time');
    expect(slugFrom('mcp.example.com-8443')).toBe('mcp-example-com-8443');
    expect(slugFrom('...')).toBe('service');
    expect(SERVICE_NAME.test(slugFrom(`-${'a.'.repeat(60)}`))).toBe(true);
  });
});
