import { describe, expect, it } from 'vitest';
import { checkStdioCommand, commandLineOf, tokenizeCommand } from './stdio-command';

describe('tokenizeCommand', () => {
  it('splits on whitespace and keeps quoted words together', () => {
    expect(tokenizeCommand(`npx -y "my pkg" 'a b'  c`)).toEqual(['npx', '-y', 'my pkg', 'a b', 'c']);
  });

  it('joins quoted and bare parts of one word, and honours escapes', () => {
    expect(tokenizeCommand(`--dir="/tmp/x y"/z a\\ b "say \\"hi\\""`)).toEqual(['--dir=/tmp/x y/z', 'a b', 'say "hi"']);
  });

  it('keeps an empty quoted word', () => {
    expect(tokenizeCommand(`uvx pkg ''`)).toEqual(['uvx', 'pkg', '']);
  });

  it('returns null for an unclosed quote', () => {
    expect(tokenizeCommand(`npx "pkg`)).toBeNull();
    expect(tokenizeCommand(`npx 'pkg`)).toBeNull();
  });
});

describe('checkStdioCommand (docs/console.md §5)', () => {
  it('requires a command', () => {
    expect(checkStdioCommand('   ')).toEqual({ ok: false, error: 'commandRequired' });
  });

  it('maps npx to npm and uvx to uv with the package name', () => {
    expect(checkStdioCommand('npx -y @modelcontextprotocol/server-everything')).toEqual({
      ok: true,
      runner: 'npx',
      packageName: '@modelcontextprotocol/server-everything',
      packageManager: 'npm',
    });
    expect(checkStdioCommand('uvx mcp-server-fetch')).toMatchObject({ ok: true, packageName: 'mcp-server-fetch', packageManager: 'uv' });
  });

  it('refuses anything that does not start with "npx ", "uvx " or an absolute path', () => {
    for (const line of ['node server.js', 'npxx pkg', 'bash -c "rm -rf /"', './run.sh', 'NPX pkg']) {
      expect(checkStdioCommand(line), line).toEqual({ ok: false, error: 'commandNotAllowed' });
    }
  });

  it('refuses npx -c, which would run its argument through a shell, as the server does', () => {
    expect(checkStdioCommand('npx -c "rm -rf /"')).toEqual({ ok: false, error: 'commandNotAllowed' });
  });

  it('fails to parse a bare runner, a runner with only flags, or an unclosed quote', () => {
    expect(checkStdioCommand('npx')).toEqual({ ok: false, error: 'commandParseFailed' });
    expect(checkStdioCommand('uvx')).toEqual({ ok: false, error: 'commandParseFailed' });
    expect(checkStdioCommand('npx -y --quiet')).toEqual({ ok: false, error: 'commandParseFailed' });
    expect(checkStdioCommand('npx "pkg')).toEqual({ ok: false, error: 'commandParseFailed' });
  });

  it('accepts the absolute path of an executable (the server checks it exists)', () => {
    expect(checkStdioCommand('/usr/bin/node /srv/everything/index.js stdio')).toEqual({
      ok: true,
      runner: 'executable',
      packageName: '',
      packageManager: '',
    });
  });
});

describe('commandLineOf', () => {
  it('joins a stored command and its arguments, quoting what needs it, so it tokenises back', () => {
    const line = commandLineOf('/usr/bin/node', JSON.stringify(['/a b/index.js', "it's", 'stdio']));
    expect(line).toBe(`/usr/bin/node '/a b/index.js' 'it'\\''s' stdio`);
    expect(tokenizeCommand(line)).toEqual(['/usr/bin/node', '/a b/index.js', "it's", 'stdio']);
  });

  it('shows the command alone when the arguments are missing or broken', () => {
    expect(commandLineOf('npx', 'not json')).toBe('npx');
    expect(commandLineOf('npx', '')).toBe('npx');
  });
});
