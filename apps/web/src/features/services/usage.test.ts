import { describe, expect, it } from 'vitest';
import { hasDailyLimit, parseDailyLimit, remainingAfter, showsRemaining, usagePercent, usageTone } from './usage';

describe('usage bar (docs/console.md §2.5, §9)', () => {
  it('is green below 80 %, yellow from 80 %, red at or over the limit', () => {
    expect(usageTone(0, 10)).toBe('green');
    expect(usageTone(7, 10)).toBe('green');
    expect(usageTone(8, 10)).toBe('yellow');
    expect(usageTone(9, 10)).toBe('yellow');
    expect(usageTone(10, 10)).toBe('red');
    expect(usageTone(12, 10)).toBe('red');
    expect(usageTone(79, 100)).toBe('green');
    expect(usageTone(80, 100)).toBe('yellow');
  });

  it('fills in proportion and never beyond full', () => {
    expect(usagePercent(1, 4)).toBe(25);
    expect(usagePercent(9, 4)).toBe(100);
  });

  it('shows only when a limit above 0 is set', () => {
    expect(hasDailyLimit(5)).toBe(true);
    expect(hasDailyLimit(0)).toBe(false);
    expect(hasDailyLimit(undefined)).toBe(false);
  });

  it("shows 'requests remaining' when remaining_requests >= 0", () => {
    expect(showsRemaining(0)).toBe(true);
    expect(showsRemaining(3)).toBe(true);
    expect(showsRemaining(-1)).toBe(false);
    expect(showsRemaining(undefined)).toBe(false);
  });
});

describe('daily limit (docs/console.md §5)', () => {
  it('is a whole number of at least 0; anything not a number becomes 0', () => {
    expect(parseDailyLimit('25')).toBe(25);
    expect(parseDailyLimit(' 7 ')).toBe(7);
    expect(parseDailyLimit('3.9')).toBe(3);
    expect(parseDailyLimit('0')).toBe(0);
    expect(parseDailyLimit('-4')).toBe(0);
    expect(parseDailyLimit('')).toBe(0);
    expect(parseDailyLimit('abc')).toBe(0);
  });

  it('sets remaining to the limit minus today’s count above 0, else -1 (unlimited)', () => {
    expect(remainingAfter(10, 3)).toBe(7);
    expect(remainingAfter(10, 10)).toBe(0);
    expect(remainingAfter(2, 5)).toBe(0);
    expect(remainingAfter(0, 5)).toBe(-1);
  });
});
