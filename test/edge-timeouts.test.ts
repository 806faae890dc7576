import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { httpRange, httpRead, READ_TIMEOUT_MS, timedRead, timedReads } from '../src/http/edge-site.js';
import { openedFile, type DenoFile } from '../src/platforms/deno/adapter.js';
import { heldFiles, type PositionalFile } from '../src/platforms/lambda/package-reads.js';
import type { OpenedFile } from '../src/site/edge-blocks.js';

// An edge file's read that takes longer than READ_TIMEOUT_MS fails the answer (issue #25), and
// is stopped, not left running: its fetch aborted, a file held open closed (its read then fails),
// a file opened too late closed, a Lambda package file let go and read no further.

beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
afterEach(() => void vi.useRealTimers());

/** Waits for `reading` to fail once the read timeout has passed: its error's message. */
async function givenUp(reading: Promise<unknown>): Promise<string> {
  const failed = reading.then(
    () => 'answered',
    (error: Error) => error.message,
  );
  await vi.advanceTimersByTimeAsync(READ_TIMEOUT_MS + 1);
  return failed;
}

/** A fetch that answers only when aborted (then rejects with the signal's reason), its requests kept. */
function hangingFetch() {
  const requests: Request[] = [];
  const fetchFile = (request: Request) => {
    requests.push(request);
    return new Promise<Response>((_, reject) =>
      request.signal.addEventListener('abort', () => reject(request.signal.reason)),
    );
  };
  return { requests, fetchFile };
}

const never = () => new Promise<never>(() => undefined);
const NO_ANSWER = /could not be read \(no answer in 10 s\)/;

describe('a read given up after READ_TIMEOUT_MS', () => {
  it.each([
    [
      'a whole file over HTTP (the Worker’s assets, Netlify’s CDN)',
      (f: ReturnType<typeof hangingFetch>) =>
        timedRead(httpRead(f.fetchFile, 'http://a.example'))('_cities-api/edge/index.json'),
    ],
    [
      'a range over HTTP',
      (f: ReturnType<typeof hangingFetch>) =>
        timedReads({ readRange: httpRange(f.fetchFile, 'http://a.example') }).readRange!('b.bin', 0, 100),
    ],
  ])('%s: the request aborted', async (_, read) => {
    const hanging = hangingFetch();
    expect(await givenUp(read(hanging))).toMatch(NO_ANSWER);
    expect(hanging.requests.map((r) => r.signal.aborted)).toEqual([true]);
  });

  it('a Deno file read whole: its signal aborted', async () => {
    let signal: AbortSignal | undefined;
    const read = timedRead((_path, _into, given) => {
      signal = given;
      return never();
    });
    expect(await givenUp(read('b.bin'))).toMatch(NO_ANSWER);
    expect(signal?.aborted).toBe(true);
  });

  it.each<[string, (file: OpenedFile) => Promise<unknown>]>([
    ['its range', (file) => file.range(0, 16)],
    ['all of it', (file) => file.read()],
  ])('a file held open (Deno), %s: the handle closed, once however often the page closes it', async (_, read) => {
    let closed = 0;
    const deno: DenoFile = {
      read: never,
      seek: async (at) => at,
      stat: async () => ({ size: 100 }),
      close: () => void closed++,
    };
    const { open } = timedReads({ open: async () => openedFile(deno) });
    const file = await open!('b.bin');
    expect(await givenUp(read(file))).toMatch(NO_ANSWER);
    expect(closed).toBe(1);
    file.close();
    expect(closed).toBe(1);
  });

  it('an open answered after it was given up: the file closed when it comes', async () => {
    let closed = 0;
    let answer: (file: OpenedFile) => void = () => undefined;
    const { open } = timedReads({ open: () => new Promise<OpenedFile>((resolve) => (answer = resolve)) });
    expect(await givenUp(open!('b.bin'))).toMatch(NO_ANSWER);
    answer({ range: never, read: never, close: () => void closed++ });
    await vi.advanceTimersByTimeAsync(0);
    expect(closed).toBe(1);
  });

  it('a Lambda package file read in parts: no part read once given up, the file let go and opened again for the next read', async () => {
    let [opens, closes, parts] = [0, 0, 0];
    let next: () => void = () => undefined;
    const file: PositionalFile = {
      // One byte a read, each answered when the test says.
      read: (buffer, offset) =>
        new Promise((resolve) => {
          parts++;
          next = () => resolve({ bytesRead: (buffer[offset] = 1) });
        }),
      stat: async () => ({ size: 100 }),
      close: async () => void closes++,
    };
    const { readRange } = heldFiles(async () => {
      opens++;
      return file;
    });
    const timed = timedReads({ readRange }).readRange!;
    const reading = timed('b.bin', 0, 10);
    await vi.advanceTimersByTimeAsync(0);
    expect(await givenUp(reading)).toMatch(NO_ANSWER);
    next();
    await vi.advanceTimersByTimeAsync(0);
    expect({ parts, closes }).toEqual({ parts: 1, closes: 1 });
    const again = readRange('b.bin', 0, 1);
    await vi.advanceTimersByTimeAsync(0);
    next();
    expect((await again).length).toBe(1);
    expect(opens).toBe(2);
  });
});
