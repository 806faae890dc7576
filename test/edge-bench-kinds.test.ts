import { describe, expect, it } from 'vitest';
import { kinds, pageWithin, statusesLine } from '../scripts/bench/edge-kinds.mjs';

// The bench's 21 answers a kind (the first and 20 next), at the sizes it runs and the 20k test's.
const ANSWERS = 21;
const pageOf = (query: string) => {
  const params = new URLSearchParams(query);
  return { size: Number(params.get('page_size')), page: Number(params.get('page') ?? 1) };
};

describe('bench-edge query kinds', () => {
  it.each([20_000, 20_978, 135_233])('every page asked at %i cities exists (no 404 measured as an answer)', (count) => {
    const past: string[] = [];
    for (const [label, query] of kinds(count))
      for (let i = 0; i < ANSWERS; i++) {
        const { size, page } = pageOf(query(i));
        if (page < 1 || page > Math.max(1, Math.ceil(count / size))) past.push(`${label}: ${query(i)}`);
      }
    expect(past).toEqual([]);
  });

  it.each([
    ['a page within the list is itself', 100, 7, 5, 5],
    ['the page after the last is the first', 100, 7, 16, 1],
    ['a page before the first wraps to the last', 100, 7, 0, 15],
    ['an empty list has its one page', 0, 7, 9, 1],
  ])('pageWithin: %s', (_, count, size, page, want) => {
    expect(pageWithin(count, size, page)).toBe(want);
  });

  it.each([
    ['one status alone', [200, 200], '200'],
    ['mixed statuses with their counts', [200, 404, 404], '200 x1, 404 x2'],
  ])('statusesLine: %s', (_, statuses, want) => {
    expect(statusesLine(statuses)).toBe(want);
  });
});
