import { describe, expect, it } from 'vitest';
import { retryDelay } from '../src/dataset/catch-up.js';

describe('a failed catch-up is tried again later each time it fails in a row', () => {
  it.each([
    ['the first failure: 1 s', 1, 1000],
    ['the second: 2 s', 2, 2000],
    ['the fourth: 8 s', 4, 8000],
    ['the sixth: 32 s', 6, 32_000],
    ['the seventh and after: a minute at most', 7, 60_000],
    ['a thousand failures: still a minute', 1000, 60_000],
  ])('%s', (_, failures, ms) => {
    expect(retryDelay(failures)).toBe(ms);
  });
});
