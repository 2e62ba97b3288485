import { describe, expect, it } from 'vitest';
import { FailureLines } from './failure-lines.mjs';

describe('FailureLines', () => {
  it('keeps the lines naming failed vitest and Playwright tests, across chunk boundaries, each once, without colours', () => {
    const f = new FailureLines();
    f.push(' ✓  server  test/a.test.ts (3 tests) 10ms\n \x1b[31mFAIL\x1b[39m   server  test/faults/metering-redis.test.ts > two');
    f.push(' replicas > counts\n  ✘  12 specs/market.spec.ts:21:3 › searches (4.5s)\n');
    f.push('  1) [chromium] › specs/market.spec.ts:21:3 › searches ─────\n');
    f.push(' FAIL   server  test/faults/metering-redis.test.ts > two replicas > counts\n');
    f.push('This error originated in "test/x.test.ts" test file.\n');
    f.push('Tests  1 failed | 2 passed\n  ✓  13 specs/ok.spec.ts:1:1 › fine');
    expect(f.end()).toEqual([
      'FAIL   server  test/faults/metering-redis.test.ts > two replicas > counts',
      '✘  12 specs/market.spec.ts:21:3 › searches (4.5s)',
      '1) [chromium] › specs/market.spec.ts:21:3 › searches ─────',
      'This error originated in "test/x.test.ts" test file.',
    ]);
  });

  it('keeps, under a failed test or hook, the first line of its error and where it was thrown', () => {
    const f = new FailureLines();
    f.push(' FAIL   server  test/gateway/openapi-face.test.ts > the OpenAPI face on postgres\n');
    f.push('Error: Hook timed out in 60000ms.\nIf this is a long-running hook, pass a timeout value.\n');
    f.push(' ❯ test/gateway/openapi-face.test.ts:98:3\n     96|\n\n');
    f.push('[gateway-harness] the app’s close is still running: closing part: none (Fastify itself)\n');
    f.push(' FAIL   server  test/a.test.ts > b > c\nAssertionError: expected 502 to be 200 // Object.is equality\n\n- Expected\n');
    f.push('  2) [chromium] › specs/groups.spec.ts:10:3 › lists ─────\n\n    Error: expect(locator).toBeVisible() failed\n');
    f.push('    at /e2e/specs/groups.spec.ts:14:5\n');
    // Without a project name, as this repository's single-project config prints it.
    f.push('  3) specs/session-errors.spec.ts:6:3 › signs in again ─────\n\n    Test timeout of 60000ms exceeded.\n');
    // Far from any header, an error line is not kept.
    f.push(`${'x\n'.repeat(20)}Error: unrelated\n`);
    expect(f.end()).toEqual([
      'FAIL   server  test/gateway/openapi-face.test.ts > the OpenAPI face on postgres',
      '  Error: Hook timed out in 60000ms.',
      '  ❯ test/gateway/openapi-face.test.ts:98:3',
      '[gateway-harness] the app’s close is still running: closing part: none (Fastify itself)',
      'FAIL   server  test/a.test.ts > b > c',
      '  AssertionError: expected 502 to be 200 // Object.is equality',
      '2) [chromium] › specs/groups.spec.ts:10:3 › lists ─────',
      '  Error: expect(locator).toBeVisible() failed',
      '  at /e2e/specs/groups.spec.ts:14:5',
      '3) specs/session-errors.spec.ts:6:3 › signs in again ─────',
      '  Test timeout of 60000ms exceeded.',
    ]);
  });

  it('keeps at most the first `max` lines, and nothing from a green run', () => {
    const many = new FailureLines(2);
    many.push(' FAIL  a.test.ts > one\n FAIL  a.test.ts > two\n FAIL  a.test.ts > three\n');
    expect(many.end()).toEqual(['FAIL  a.test.ts > one', 'FAIL  a.test.ts > two']);
    const green = new FailureLines();
    green.push(' ✓  server  test/a.test.ts (3 tests)\n Test Files  1 passed (1)\n');
    expect(green.end()).toEqual([]);
  });
});
