import { describe, expect, it } from 'vitest';
import { runBounded } from '../src/fs/run-bounded.js';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** Tasks that record when they start and end, and how many run at once. */
function recorder(fail?: (item: number) => boolean) {
  const started: number[] = [];
  let running = 0;
  let most = 0;
  const task = async (item: number) => {
    started.push(item);
    most = Math.max(most, ++running);
    await tick();
    running--;
    if (fail?.(item)) throw new Error(`task ${item} failed`);
  };
  return { task, started, most: () => most, running: () => running };
}

function* numbers(count: number, after?: { throwAt?: number; closed?: () => void }): Generator<number> {
  try {
    for (let i = 0; i < count; i++) {
      if (i === after?.throwAt) throw new Error(`the items failed at ${i}`);
      yield i;
    }
  } finally {
    after?.closed?.();
  }
}

async function* asyncNumbers(count: number): AsyncGenerator<number> {
  for (let i = 0; i < count; i++) {
    await tick();
    yield i;
  }
}

describe('runBounded: a bounded number of tasks in flight', () => {
  it.each([
    ['fewer items than the limit', 3, 8, 3],
    ['more items than the limit', 40, 8, 8],
    ['a limit of one: one at a time', 10, 1, 1],
    ['a limit of zero is taken as one', 5, 0, 1],
  ])('%s: every item runs, in order, at most the limit at once', async (_, count, limit, most) => {
    const r = recorder();
    await runBounded(numbers(count), r.task, limit);
    expect(r.started).toEqual([...Array(count).keys()]);
    expect(r.most()).toBe(most);
  });

  it('an async iterable: every item runs, in order, at most the limit at once', async () => {
    const r = recorder();
    await runBounded(asyncNumbers(30), r.task, 4);
    expect(r.started).toEqual([...Array(30).keys()]);
    expect(r.most()).toBeLessThanOrEqual(4);
  });

  it.each([
    [
      'a task fails: its error, no item taken after it, the items closed',
      { failAt: 5, throwAt: undefined },
      'task 5 failed',
    ],
    [
      'the items fail: their error, after the running tasks',
      { failAt: undefined, throwAt: 12 },
      'the items failed at 12',
    ],
  ])('%s', async (_, { failAt, throwAt }, message) => {
    const r = recorder((item) => item === failAt);
    let closed = false;
    await expect(runBounded(numbers(100, { throwAt, closed: () => (closed = true) }), r.task, 4)).rejects.toThrow(
      message,
    );
    expect(r.running()).toBe(0);
    expect(closed).toBe(true);
    expect(Math.max(...r.started)).toBeLessThan(failAt !== undefined ? failAt + 4 : throwAt!);
  });

  it('only the first failure is thrown, once every running task has settled', async () => {
    const r = recorder(() => true);
    await expect(runBounded(numbers(10), r.task, 3)).rejects.toThrow('task 0 failed');
    expect(r.running()).toBe(0);
    expect(r.started).toEqual([0, 1, 2]);
  });

  it('a task that throws before returning a promise: its error, once the running tasks have settled', async () => {
    const r = recorder();
    const task = (item: number) => {
      if (item === 3) throw new Error('task 3 threw');
      return r.task(item);
    };
    await expect(runBounded(numbers(50), task, 4)).rejects.toThrow('task 3 threw');
    expect(r.running()).toBe(0);
  });

  it('a task that outlasts many others is waited on a bounded number of times (no reaction per item)', async () => {
    let thens = 0;
    class Counted<T> extends Promise<T> {
      override then<A = T, B = never>(
        onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
        onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
      ): Promise<A | B> {
        thens++;
        return super.then(onFulfilled, onRejected);
      }
    }
    let release!: () => void;
    const slow = new Counted<void>((resolve) => (release = resolve));
    const task = (item: number) => (item === 0 ? slow : tick());
    const run = runBounded(numbers(200), task, 4);
    while (thens < 1) await tick();
    for (let i = 0; i < 20; i++) await tick();
    const whileWaiting = thens;
    release();
    await run;
    expect(whileWaiting).toBeLessThanOrEqual(3);
  });
});
