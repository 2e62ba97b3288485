import { describe, expect, it } from 'vitest';
import { runnerPackageOf, splitCommandLine } from './command-line.js';

const packageOf = (runner: 'npx' | 'uvx', args: string[]) => {
  const found = runnerPackageOf(runner, args);
  return found.ok ? found.packageName : found.reason;
};

describe('splitCommandLine', () => {
  it('splits on runs of white space and keeps quoted text and empty quoted words', () => {
    expect(splitCommandLine(`npx  -y\tpkg "two words" 'single' ''`)).toEqual(['npx', '-y', 'pkg', 'two words', 'single', '']);
  });

  it('lets a backslash escape " \\ $ and ` inside double quotes only, and anything outside quotes', () => {
    expect(splitCommandLine(`"a\\$b\\\`c\\n" x\\ y 'l\\it'`)).toEqual(['a$b`c\\n', 'x y', 'l\\it']);
  });

  it('answers null for an open quote', () => {
    expect(splitCommandLine(`npx "pkg`)).toBeNull();
    expect(splitCommandLine(`npx 'pkg`)).toBeNull();
  });
});

describe('runnerPackageOf', () => {
  it('skips flags and takes the first other word', () => {
    expect(packageOf('npx', ['-y', '--quiet', '@scope/server@1.2', '--port', '3'])).toBe('@scope/server@1.2');
  });

  it('skips the value of a flag that takes one', () => {
    expect(packageOf('npx', ['--registry', 'https://r.example', 'pkg'])).toBe('pkg');
    expect(packageOf('uvx', ['--python', '3.12', 'mcp-server-time'])).toBe('mcp-server-time');
  });

  it('prefers the package named by --package / --from', () => {
    expect(packageOf('npx', ['--package', 'real-pkg', 'its-bin'])).toBe('real-pkg');
    expect(packageOf('npx', ['--package=eq-pkg', 'bin'])).toBe('eq-pkg');
    expect(packageOf('uvx', ['--from', 'git+https://x/y', 'tool'])).toBe('git+https://x/y');
  });

  it('is empty when only flags follow', () => {
    expect(packageOf('npx', ['-y', '--registry', 'https://r.example'])).toBe('');
  });

  it('refuses npx -c / --call, which run a shell, but not uvx -c (a constraints file)', () => {
    expect(packageOf('npx', ['-c', 'echo hi'])).toBe('shell_flag');
    expect(packageOf('npx', ['--call=echo hi'])).toBe('shell_flag');
    expect(packageOf('uvx', ['-c', 'constraints.txt', 'tool'])).toBe('tool');
  });
});
