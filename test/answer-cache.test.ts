import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../src/app/serve.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import type { QueryPair } from '../src/core/query-string.js';
import { AnswerCache, type KeptAnswer } from '../src/http/answer-cache.js';
import { JSON_HEADERS } from '../src/http/route-types.js';
import { headList } from '../src/http/send-answer.js';
import { tempDir } from './helpers.js';
import { rawRequest, ROOT } from './serve-helpers.js';

// Computed answers kept beside the route memo: keyed by every query pair and owned by one index
// and spec (the data and settings they were computed from), so one request never changes what
// another client gets, and a rebuild or a POST is never answered from before it.

const answerOf = (text: string, status = 200): KeptAnswer => ({
  status,
  head: headList(JSON_HEADERS, Buffer.byteLength(text)),
  body: Buffer.from(text),
});

describe('keys: two queries share an answer only when their pairs are the same, in the same order', () => {
  it.each([
    ['a comma inside a value vs between pairs', [['a', 'b,c']], [['a,b', 'c']]],
    [
      'an unknown parameter added (it is carried into the links)',
      [['page', '2']],
      [
        ['page', '2'],
        ['x', '1'],
      ],
    ],
    [
      'the same pairs in another order (the links keep the order)',
      [
        ['page', '2'],
        ['page_size', '7'],
      ],
      [
        ['page_size', '7'],
        ['page', '2'],
      ],
    ],
    ['a value with a quote vs the quote in the name', [['a"', 'b']], [['a', '"b']]],
    [
      'a repeated parameter vs once',
      [['page', '2']],
      [
        ['page', '2'],
        ['page', '2'],
      ],
    ],
  ] as [string, QueryPair[], QueryPair[]][])('%s', (_, a, b) => {
    const cache = new AnswerCache(1 << 20).owner({}, {});
    computedTwice(cache, AnswerCache.key(a), answerOf('a'));
    expect(cache.get(AnswerCache.key(b))).toBeUndefined();
    expect(textOf(cache.get(AnswerCache.key([...a])))).toBe('a');
    // A decision seen for the first time: the same key, not remembered by its pairs.
    expect([AnswerCache.key([...a], false), AnswerCache.key([...b], false)]).toEqual([
      AnswerCache.key(a),
      AnswerCache.key(b),
    ]);
  });
});

/** A kept answer's body as text (undefined when none is kept). */
const textOf = (answer: KeptAnswer | undefined) => answer && Buffer.from(answer.body).toString();

/** What the handler does with an answer it computes, twice: the second time it is kept. */
function computedTwice(cache: AnswerCache, key: string, answer: KeptAnswer): void {
  cache.offer(key, answer);
  cache.offer(key, answer);
}

describe('what is kept', () => {
  const index = {};
  const spec = {};
  it.each([
    ['another index (a POST or a rebuild): empty', () => ({}), () => spec, undefined],
    ['another spec (other links or count): empty', () => index, () => ({}), undefined],
    ['the same index and spec: kept', () => index, () => spec, 'kept'],
  ] as const)('%s', (_, nextIndex, nextSpec, expected) => {
    const cache = new AnswerCache(1 << 20);
    computedTwice(cache.owner(index, spec), 'k', answerOf('kept'));
    expect(textOf(cache.owner(nextIndex(), nextSpec()).get('k'))).toBe(expected);
  });

  it('within its budget: the least recently used answer goes first', () => {
    const cache = new AnswerCache(16 * 1000).owner({}, {});
    // Each costs 930 bytes (800 of body, 2 of key, 128 for the entry): 17 fit, the 18th evicts one.
    const keys = 'abcdefghijklmnopq'.split('');
    for (const key of keys) computedTwice(cache, key, answerOf(key.repeat(800)));
    cache.get('a');
    computedTwice(cache, 'r', answerOf('r'.repeat(800)));
    expect(cache.size).toBe(17 * 930);
    expect(['a', 'b', 'c', 'r'].map((key) => cache.get(key) !== undefined)).toEqual([true, false, true, true]);
  });

  it.each([
    ['computed once: not kept (a query asked once)', ['k'], 'k', false],
    ['computed twice: kept', ['k', 'k'], 'k', true],
    ['another key computed between: still kept the second time', ['k', 'j', 'k'], 'k', true],
    ['the other key, computed once, is not', ['k', 'j', 'k'], 'j', false],
  ])('%s', (_, computed, asked, kept) => {
    const cache = new AnswerCache(1 << 20).owner({}, {});
    for (const key of computed) cache.offer(key, answerOf(key));
    expect(cache.get(asked) !== undefined).toBe(kept);
  });

  it('computed once, offered as admitted (its route memo saw the target a second time): kept at once', () => {
    const cache = new AnswerCache(1 << 20).owner({}, {});
    cache.offer('k', answerOf('k'), true);
    expect(textOf(cache.get('k'))).toBe('k');
  });

  it('a kept body is a copy of its own: the array it came in (a view of a shared slab) may be reused', () => {
    const cache = new AnswerCache(1 << 20).owner({}, {});
    const slab = Buffer.from('xxkeptxx');
    const body = slab.subarray(2, 6);
    cache.offer('k', { status: 200, head: headList(JSON_HEADERS, 4), body }, true);
    slab.fill('z');
    expect([textOf(cache.get('k')), cache.get('k')?.body.buffer.byteLength]).toEqual(['kept', 4]);
  });

  it('computed once before a POST or rebuild, once after: not kept (what was computed once is forgotten too)', () => {
    const cache = new AnswerCache(1 << 20);
    cache.owner({}, {}).offer('k', answerOf('k'));
    cache.owner({}, {}).offer('k', answerOf('k'));
    expect(cache.get('k')).toBeUndefined();
  });

  it('an answer over a sixteenth of the budget is not kept', () => {
    const cache = new AnswerCache(16 * 1000).owner({}, {});
    computedTwice(cache, 'big', answerOf('x'.repeat(1001)));
    expect([cache.get('big'), cache.size]).toEqual([undefined, 0]);
  });
});

describe('a writable server answering computed pages from the cache', () => {
  const TOKEN = 'test-token-0123456789';
  let server: RunningServer;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const made = await tempDir('cities-answer-cache-');
    cleanup = made.cleanup;
    const data = join(made.dir, 'cities.csv');
    await copyFile(join(ROOT, 'data/cities.csv'), data);
    server = await serve({ dir: join(made.dir, 'site'), data, port: 0, writable: true, token: TOKEN, pageSizes: [10] });
  });
  afterAll(async () => {
    await server.close();
    await cleanup();
  });
  const page = async (query: string) => {
    const res = await rawRequest(`${server.apiUrl}?${query}`);
    return JSON.parse(res.body.toString()) as { count: number; next: string | null; results: { id: number }[] };
  };

  it('the same computed page twice, then after a POST: the new city counted and listed at once', async () => {
    const query = 'page_size=100'; // every city on one computed page
    const first = await page(query);
    expect(await page(query)).toEqual(first);
    const names = Object.fromEntries(NAME_FIELDS.map((f) => [f, 'Cachetown']));
    const created = await rawRequest(server.apiUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` },
      body: JSON.stringify(names),
    });
    expect(created.status).toBe(201);
    const id = (JSON.parse(created.body.toString()) as { id: number }).id;
    const after = await page(query);
    expect([after.count, after.results.length, after.results.some((city) => city.id === id)]).toEqual([
      first.count + 1,
      first.results.length + 1,
      true,
    ]);
  });

  // An indented answer (Accept: application/json; indent=2) is never kept: computed afresh, it is the reference.
  it.each([
    ['an unknown parameter', 'page_size=7&page=2&x=%26y%3D1'],
    ['a parameter repeated', 'page_size=7&page=2&page=3'],
    ['the order of the parameters', 'page=2&page_size=7'],
    ['an encoded name', 'page_size=7&pag%65=2'],
  ])(
    '%s: answered three times (the third from the cache), each as computed afresh, whatever was asked before',
    async (_, query) => {
      await page('page_size=7&page=2');
      const fresh = await rawRequest(`${server.apiUrl}?${query}`, {
        headers: { Accept: 'application/json; indent=2' },
      });
      const thrice = [await page(query), await page(query), await page(query)];
      expect(thrice).toEqual(Array(3).fill(JSON.parse(fresh.body.toString())));
    },
  );
});
