import { describe, expect, it } from 'vitest';
import { PAGE_WINDOW, pageCount, pageWindow, shownRange } from './pagination';

describe('page count', () => {
  it.each([
    [0, 0],
    [-5, 0],
    [Number.NaN, 0],
    [1, 1],
    [19, 1],
    [20, 1],
    [21, 2],
    [40, 2],
    [41, 3],
    [45, 3],
    [100, 5],
    [101, 6],
    [1_000_001, 50_001],
  ])('%s rows fill %s pages of 20', (total, pages) => {
    expect(pageCount(total, 20)).toBe(pages);
  });

  it('a page size of 0 fills no pages rather than infinitely many', () => {
    expect(pageCount(10, 0)).toBe(0);
  });
});

describe('page window (up to five page buttons)', () => {
  it('offers five buttons at most', () => {
    expect(PAGE_WINDOW).toBe(5);
  });

  it.each([
    // [current, pages, buttons]
    [1, 0, []],
    [1, 1, [1]],
    [1, 2, [1, 2]],
    [2, 2, [1, 2]],
    [1, 3, [1, 2, 3]],
    [3, 3, [1, 2, 3]],
    [1, 4, [1, 2, 3, 4]],
    [4, 4, [1, 2, 3, 4]],
    [1, 5, [1, 2, 3, 4, 5]],
    [3, 5, [1, 2, 3, 4, 5]],
    [5, 5, [1, 2, 3, 4, 5]],
    [1, 6, [1, 2, 3, 4, 5]],
    [3, 6, [1, 2, 3, 4, 5]],
    [4, 6, [2, 3, 4, 5, 6]],
    [6, 6, [2, 3, 4, 5, 6]],
    [1, 10, [1, 2, 3, 4, 5]],
    [2, 10, [1, 2, 3, 4, 5]],
    [3, 10, [1, 2, 3, 4, 5]],
    [4, 10, [2, 3, 4, 5, 6]],
    [5, 10, [3, 4, 5, 6, 7]],
    [7, 10, [5, 6, 7, 8, 9]],
    [8, 10, [6, 7, 8, 9, 10]],
    [9, 10, [6, 7, 8, 9, 10]],
    [10, 10, [6, 7, 8, 9, 10]],
    [500, 1000, [498, 499, 500, 501, 502]],
  ])('page %s of %s shows %j', (current, pages, buttons) => {
    expect(pageWindow(current, pages)).toEqual(buttons);
  });

  it.each([
    [0, 10, [1, 2, 3, 4, 5]],
    [-3, 10, [1, 2, 3, 4, 5]],
    [11, 10, [6, 7, 8, 9, 10]],
    [99, 3, [1, 2, 3]],
    [Number.NaN, 10, [1, 2, 3, 4, 5]],
    [4.7, 10, [2, 3, 4, 5, 6]],
  ])('a current page outside the pages (%s of %s) counts as the nearest end: %j', (current, pages, buttons) => {
    expect(pageWindow(current, pages)).toEqual(buttons);
  });

  it('keeps the current page inside the window and the window consecutive for every page of 1 to 30 pages', () => {
    for (let pages = 1; pages <= 30; pages += 1) {
      for (let current = 1; current <= pages; current += 1) {
        const window = pageWindow(current, pages);
        expect(window).toHaveLength(Math.min(5, pages));
        expect(window).toContain(current);
        expect(window[0]).toBeGreaterThanOrEqual(1);
        expect(window.at(-1)).toBeLessThanOrEqual(pages);
        expect(window.every((n, i) => i === 0 || n === (window[i - 1] ?? 0) + 1)).toBe(true);
      }
    }
  });

  it('takes another window size', () => {
    expect(pageWindow(5, 10, 3)).toEqual([4, 5, 6]);
    expect(pageWindow(5, 10, 4)).toEqual([4, 5, 6, 7]);
    expect(pageWindow(5, 10, 0)).toEqual([]);
  });
});

describe("'showing start to end of total'", () => {
  it.each([
    // [page, rows on the page, total, start, end]
    [1, 20, 45, 1, 20],
    [2, 20, 45, 21, 40],
    [3, 5, 45, 41, 45],
    [1, 1, 1, 1, 1],
    [1, 20, 20, 1, 20],
    [2, 1, 21, 21, 21],
    [50, 20, 1000, 981, 1000],
  ])('page %s with %s of %s rows shows %s to %s', (page, rows, total, start, end) => {
    expect(shownRange(page, 20, rows, total)).toEqual({ start, end, total });
  });

  it('is not shown for a page without rows', () => {
    expect(shownRange(1, 20, 0, 0)).toBeNull();
    expect(shownRange(4, 20, 0, 45)).toBeNull();
  });

  it('never reads a total below the end when lines arrived between the count and the rows', () => {
    expect(shownRange(3, 20, 20, 45)).toEqual({ start: 41, end: 60, total: 60 });
  });
});
