import { describe, expect, it } from 'vitest';
import { negotiate } from '../src/core/negotiate.js';
import { inStep } from '../src/http/edge-cache.js';
import { answerETag, matchesETag } from '../src/site/answer-tag.js';

// What a computed answer's ETag names, and the in-step copy a cache write reads beside the client.

const SPEC = { baseUrl: 'http://api.example.com', defaultPageSize: 10, count: 48 };
const JSON_FORM = negotiate(undefined, '*/*');
const PAIRS = [['page_size', '7'] as const];
const BASE = answerETag(SPEC, 'aabbccdd00112233', JSON_FORM, PAIRS);

describe('answerETag: the same inputs give one tag, each input changes it', () => {
  it('is weak, marked computed, 32 hex digits, and stable', () => {
    expect(BASE).toMatch(/^W\/"c[0-9a-f]{32}"$/);
    expect(answerETag({ ...SPEC }, 'aabbccdd00112233', negotiate(undefined, '*/*'), [['page_size', '7']])).toBe(BASE);
  });
  it.each([
    ['another build (tag)', () => answerETag(SPEC, 'aabbccdd00112234', JSON_FORM, PAIRS)],
    ['a city appended (count)', () => answerETag({ ...SPEC, count: 49 }, 'aabbccdd00112233', JSON_FORM, PAIRS)],
    [
      'another base URL',
      () => answerETag({ ...SPEC, baseUrl: 'http://b.example' }, 'aabbccdd00112233', JSON_FORM, PAIRS),
    ],
    [
      'another default page size',
      () => answerETag({ ...SPEC, defaultPageSize: 20 }, 'aabbccdd00112233', JSON_FORM, PAIRS),
    ],
    [
      'indented JSON',
      () => answerETag(SPEC, 'aabbccdd00112233', negotiate(undefined, 'application/json; indent=2'), PAIRS),
    ],
    ['another query', () => answerETag(SPEC, 'aabbccdd00112233', JSON_FORM, [['page_size', '8']])],
    ['the query written another way', () => answerETag(SPEC, 'aabbccdd00112233', JSON_FORM, [['page_size', '07']])],
    ['a name and value cut elsewhere', () => answerETag(SPEC, 'aabbccdd00112233', JSON_FORM, [['page_siz', 'e7']])],
    [
      'a pair split in two',
      () =>
        answerETag(SPEC, 'aabbccdd00112233', JSON_FORM, [
          ['page_size', ''],
          ['7', ''],
        ]),
    ],
    ['the pair twice', () => answerETag(SPEC, 'aabbccdd00112233', JSON_FORM, [...PAIRS, ...PAIRS])],
  ])('%s', (_, other) => {
    const tag = other();
    expect(tag).toMatch(/^W\/"c[0-9a-f]{32}"$/);
    expect(tag).not.toBe(BASE);
  });
  // Tags clients hold (If-None-Match, CDN caches) stay valid while the site and cities-api are
  // the same: pinned, so that no change of the hash goes unnoticed. (Each unit mixed into one lane
  // of four, the pairs without their JSON: a new tag for every answer once, as a rebuild gives.)
  it.each([
    ['compact JSON', JSON_FORM, PAIRS, 'W/"c6493b65d3f0d6e3dfafe5bdb0e908c2b"'],
    [
      'indented JSON, non-ASCII pairs',
      negotiate(undefined, 'application/json; indent=2'),
      [['ordering', 'name_é,-名'] as const, ['page', '3'] as const],
      'W/"c39e6d07d6fb95f26f25ea5e15a0ffac5"',
    ],
    [
      'quotes, backslashes, controls, a lone surrogate and an empty pair',
      JSON_FORM,
      [['a"b\\c', '\n\u0000\u001f'] as const, ['x', '\ud800 lone, 😀 paired'] as const, ['', ''] as const],
      'W/"c63735797708b67415e22d76a5988f602"',
    ],
    ['no pairs', JSON_FORM, [], 'W/"cd6443df25501d39bab784758cfda00f9"'],
  ])('%s: the pinned tag', (_, form, pairs, pinned) => {
    expect(answerETag(SPEC, 'aabbccdd00112233', form, pairs)).toBe(pinned);
  });
  it('the browsable page gets none (it shows the request)', () => {
    expect(answerETag(SPEC, 'aabbccdd00112233', negotiate(undefined, 'text/html'), PAIRS)).toBeUndefined();
  });
});

describe('matchesETag: If-None-Match, weak comparison', () => {
  it.each([
    ['the tag itself', 'W/"c1"', 'W/"c1"', true],
    ['the tag without W/', '"c1"', 'W/"c1"', true],
    ['in a list', '"x", W/"c1" ,"y"', 'W/"c1"', true],
    ['another tag', 'W/"c2"', 'W/"c1"', false],
    ['* (could match a 404: not honoured)', '*', 'W/"c1"', false],
    ['absent', undefined, 'W/"c1"', false],
  ])('%s', (_, field, etag, matches) => {
    expect(matchesETag(field, etag)).toBe(matches);
  });
});

/** A source of `n` one-byte chunks that counts how many were pulled. */
function counted(n: number) {
  const state = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.pulled === n) return controller.close();
        controller.enqueue(new Uint8Array([state.pulled++]));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

const readAll = async (stream: ReadableStream<Uint8Array>) => {
  const bytes: number[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) bytes.push(...chunk);
  return bytes;
};

describe('inStep: two copies of a stream, neither held whole', () => {
  it('both branches read everything, in order', async () => {
    const { stream } = counted(5);
    const [a, b] = inStep(stream);
    expect(await Promise.all([readAll(a), readAll(b)])).toEqual([
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
    ]);
  });

  it('a branch that has not read yet holds the source back (tee() would read on for the other)', async () => {
    const { stream, state } = counted(1000);
    const [client, copy] = inStep(stream);
    let settled = false;
    const first = client
      .getReader()
      .read()
      .then((r) => ((settled = true), r));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect({ settled, pulled: state.pulled }).toEqual({ settled: false, pulled: 0 });
    expect((await copy.getReader().read()).value).toEqual(new Uint8Array([0]));
    expect((await first).value).toEqual(new Uint8Array([0]));
    expect(state.pulled).toBe(1);
  });

  it.each([
    ['the client gone after a chunk: the cache copy still reads to the end', 0],
    ['the cache copy gone after a chunk: the client still reads to the end', 1],
  ])('%s', async (_, gone) => {
    const { stream, state } = counted(50);
    const branches = inStep(stream);
    const readers = branches.map((b) => b.getReader());
    const firsts = await Promise.all(readers.map((r) => r.read()));
    expect(firsts.map((f) => f.value)).toEqual([new Uint8Array([0]), new Uint8Array([0])]);
    await readers[gone]!.cancel();
    readers[1 - gone]!.releaseLock();
    expect(await readAll(branches[1 - gone]!)).toEqual(Array.from({ length: 49 }, (_, i) => i + 1));
    expect(state.pulled).toBe(50);
  });

  it('both cancelled: the source is cancelled', async () => {
    let cancelled = false;
    const source = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array([1])),
      cancel: () => void (cancelled = true),
    });
    const [a, b] = inStep(source);
    await Promise.all([a.cancel(), b.cancel()]);
    expect(cancelled).toBe(true);
  });
});
