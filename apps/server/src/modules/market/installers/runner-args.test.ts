import { describe, expect, it } from 'vitest';
import { parseNpmSpec, parsePypiSpec, pinTypedCommand, planFromNpx, planFromUvx } from './runner-args.js';

describe('npx and uvx command lines as install plans', () => {
  it('reads the package, its version and the arguments after it from npx', () => {
    expect(planFromNpx(['-y', '@modelcontextprotocol/server-filesystem@2025.8.21', '/data', '--flag'])).toEqual({
      kind: 'npm',
      identifier: '@modelcontextprotocol/server-filesystem',
      version: '2025.8.21',
      entry: '',
      args: ['/data', '--flag'],
    });
    expect(planFromNpx(['--yes', '--registry', 'https://mirror.example/', 'pkg@latest'])).toMatchObject({ identifier: 'pkg', version: '' });
    expect(planFromNpx(['-y', '-p', 'tools@1.0.0', 'tool-a', 'x'])).toEqual({
      kind: 'npm',
      identifier: 'tools',
      version: '1.0.0',
      entry: 'tool-a',
      args: ['x'],
    });
    expect(planFromNpx(['--package=tools', 'tool-b'])).toMatchObject({ identifier: 'tools', entry: 'tool-b' });
  });

  it('reads the package and command from uvx, with --from and pinned versions', () => {
    expect(planFromUvx(['mcp-server-fetch'])).toEqual({ kind: 'pypi', identifier: 'mcp-server-fetch', version: '', entry: '', args: [] });
    expect(planFromUvx(['mcp-server-time@2025.1.1', '--local-timezone', 'UTC'])).toMatchObject({
      identifier: 'mcp-server-time',
      version: '2025.1.1',
      args: ['--local-timezone', 'UTC'],
    });
    expect(planFromUvx(['--python', '3.12', '--from', 'acme-notes-mcp==0.3.1', 'acme-notes', 'serve'])).toEqual({
      kind: 'pypi',
      identifier: 'acme-notes-mcp',
      version: '0.3.1',
      entry: 'acme-notes',
      args: ['serve'],
    });
  });

  it('refuses what a plain install of one registry package cannot reproduce', () => {
    expect(() => planFromNpx(['-c', 'echo hi'])).toThrow('shell');
    expect(() => planFromNpx(['-y'])).toThrow('names no package');
    expect(() => planFromNpx(['github:user/repo'])).toThrow('not an npm registry package');
    expect(() => planFromNpx(['pkg@^1.2.0'])).toThrow('pin an exact version');
    expect(() => planFromUvx(['--with', 'extra', 'pkg'])).toThrow('--with');
    expect(() => planFromUvx(['pkg[cli]'])).toThrow('not a PyPI package name');
    expect(() => parsePypiSpec('pkg>=1.0')).toThrow();
    expect(parseNpmSpec('@scope/name')).toEqual({ identifier: '@scope/name', version: '' });
  });
});

describe('a typed npx or uvx command pinned to the installed version (what export writes)', () => {
  it('rewrites the package word only, wherever the command names it, keeping flags and arguments', () => {
    expect(pinTypedCommand(['npx', '-y', 'acme-mcp', '--verbose'], '1.0.0')).toEqual(['npx', '-y', 'acme-mcp@1.0.0', '--verbose']);
    expect(pinTypedCommand(['npx', '--registry', 'https://mirror.example/', '@scope/pkg@latest'], '2.1.0')).toEqual([
      'npx',
      '--registry',
      'https://mirror.example/',
      '@scope/pkg@2.1.0',
    ]);
    // After an Update the installed version replaces the one typed.
    expect(pinTypedCommand(['npx', '-y', '-p', 'tools@1.0.0', 'tool-a', 'x'], '1.3.0')).toEqual([
      'npx',
      '-y',
      '-p',
      'tools@1.3.0',
      'tool-a',
      'x',
    ]);
    expect(pinTypedCommand(['npx', '--package=tools', 'tool-b'], '1.3.0')).toEqual(['npx', '--package=tools@1.3.0', 'tool-b']);
    expect(pinTypedCommand(['uvx', 'mcp-server-time', '--local-timezone', 'UTC'], '2025.1.1')).toEqual([
      'uvx',
      'mcp-server-time@2025.1.1',
      '--local-timezone',
      'UTC',
    ]);
    expect(pinTypedCommand(['uvx', '--python', '3.12', '--from', 'acme-notes-mcp', 'acme-notes'], '0.3.1')).toEqual([
      'uvx',
      '--python',
      '3.12',
      '--from',
      'acme-notes-mcp==0.3.1',
      'acme-notes',
    ]);
    // Each pinned command reads back as the same plan at that version.
    const [, ...npxArgs] = pinTypedCommand(['npx', '-y', 'acme-mcp'], '1.0.0') as string[];
    expect(planFromNpx(npxArgs)).toMatchObject({ identifier: 'acme-mcp', version: '1.0.0' });
  });

  it('leaves other commands alone', () => {
    expect(pinTypedCommand(['node', 'server.js'], '1.0.0')).toBeUndefined();
    expect(pinTypedCommand(['npx', '-y'], '1.0.0')).toBeUndefined();
    expect(pinTypedCommand(['npx', 'github:user/repo'], '1.0.0')).toBeUndefined();
  });
});
