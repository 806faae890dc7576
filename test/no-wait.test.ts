import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHere } from '../src/app/build.js';
import { CityIndex } from '../src/core/city-index.js';
import { NAME_FIELDS, type NameField } from '../src/core/fields.js';
import { parseOrdering, type Ordering } from '../src/core/ordering.js';
import { Orders, type OrderSource } from '../src/core/orders.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { idOrder, ranksOf, sortByRank, type Ranks } from '../src/core/rank-order.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { loadSite } from '../src/http/site-state.js';
import { KIT, tempDir } from './helpers.js';

// Issue #26 item 2: no request waits for another's work. Asserted on structure, not on timings:
// a served site's fields are all ranked before it answers (from the build's rank files, no ICU),
// and composing a multi-field order is done in steps that let other work run between them.

/** Runs `work` counting the ICU collators made meanwhile (the ranking of a field makes one). */
async function collatorsMade<T>(work: () => Promise<T> | T): Promise<{ result: T; made: number }> {
  const Real = Intl.Collator;
  let made = 0;
  Intl.Collator = new Proxy(Real, {
    construct(target, args) {
      made++;
      return Reflect.construct(target, args) as object;
    },
    apply(target, self, args) {
      made++;
      return Reflect.apply(target, self, args) as unknown;
    },
  });
  try {
    return { result: await work(), made };
  } finally {
    Intl.Collator = Real;
  }
}

const QUERIES = [
  'ordering=name_fr',
  'ordering=-name_ch&page=3',
  'ordering=name_ar,-name_de,name_ru&page=5',
  'ordering=-name_ur,name_fa&page_size=100&page=2',
  'page=7',
];

describe('a served site is ranked before it answers', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let expected: Map<string, string>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    const data = join(KIT, 'cities1234.json');
    await buildHere({ data, out: join(dir, 'site'), baseUrl: 'http://x.test', collation: 'locale', pageSizes: [10] });
    const icu = new CityIndex(await readDataset(data), 'locale');
    expected = new Map(
      QUERIES.map((q) => [
        q,
        Buffer.from(bodyBytes(answerListing(icu, parseQuery(q), 'http://x.test').body)).toString(),
      ]),
    );
  });
  afterAll(() => cleanup());

  async function answers(site: string) {
    const loading = await collatorsMade(() => loadSite(site));
    const state = loading.result;
    try {
      const answering = await collatorsMade(() =>
        QUERIES.map((q) => {
          const body = answerListing(state.context.index, parseQuery(q), state.context.spec.baseUrl).body;
          return [q, Buffer.from(bodyBytes(body)).toString()] as const;
        }),
      );
      return { loadingCollators: loading.made, answeringCollators: answering.made, got: new Map(answering.result) };
    } finally {
      state.release();
    }
  }

  it.each([
    ['from the rank files of its edge data: no field ranked with ICU at all', false, 0],
    ['without edge data (a site of another version): every field ranked while loading', true, NAME_FIELDS.length],
  ])('%s', async (_, withoutEdge, loadingCollators) => {
    const site = join(dir, 'site');
    if (withoutEdge) await rm(join(site, '_cities-api', 'edge'), { recursive: true });
    const { got, ...made } = await answers(site);
    expect(made).toEqual({ loadingCollators, answeringCollators: 0 });
    expect(got).toEqual(expected);
  });
});

/** An OrderSource of `count` cities whose fields take few values (long runs of ties on each). */
function tiedSource(count: number, values: number): OrderSource {
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % values;
  const ranks = new Map<NameField, Ranks>(
    NAME_FIELDS.map((f) => [f, ranksOf(Uint32Array.from({ length: count }, random))]),
  );
  const byId = idOrder(Float64Array.from({ length: count }, (_, i) => i + 1));
  return {
    count,
    distinct: (field) => ranks.get(field)!.distinct,
    ranks: (field) => ranks.get(field)!,
    single: (o: Ordering) => (o[0] ? sortByRank(byId, ranks.get(o[0].field)!, o[0].descending) : byId),
  };
}

describe('a multi-field order is composed in steps, other work running between them', () => {
  const count = 60_000;
  // 10 values: about 6,000 cities share each, more than a page window (4,096).
  const source = tiedSource(count, 10);
  const ordering = parseOrdering('name_fr,-name_de,name_ru');

  // A composer (a server's thread) composes elsewhere: the window sorted on the answering thread is smaller.
  const elsewhere = async () => new Uint32Array(0);
  it.each([
    ['a page inside a few ties on its first term: ordered alone, at once', 30_000, undefined, false],
    ['a page inside 6,000 ties on its first term: composed whole', 10, undefined, true],
    ['a page inside 2,000 ties, no composer: ordered alone (the edge: no thread)', 30, undefined, false],
    ['a page inside 2,000 ties, with a composer: composed whole, by it', 30, elsewhere, true],
    ['a page inside 500 ties, with a composer: ordered alone, at once', 120, elsewhere, false],
  ])('%s', (_, values, composer, composes) => {
    expect(new Orders(tiedSource(count, values), 64, composer).composes(ordering, 100, 110)).toBe(composes);
  });

  it.each([
    ['it answers: its order is kept, no step taken here', async () => Uint32Array.of(3, 1, 2), [3, 1, 2], false],
    ['it fails: composed in steps here', async () => Promise.reject(new Error('thread gone')), null, true],
  ])('with a composer, when %s', async (_, composer, expected, stepsHere) => {
    const orders = new Orders(source, 64, composer);
    let pauses = 0;
    const composed = await orders.compose(ordering, async () => void pauses++);
    expect([...composed]).toEqual(expected ?? [...new Orders(source).order(ordering)]);
    expect(pauses > 0).toBe(stepsHere);
  });

  it('awaits a pause after each step (at most 16,384 cities), and gives the order order() gives', async () => {
    const orders = new Orders(source);
    let pauses = 0;
    let between = 0;
    const composed = await orders.compose(ordering, async () => {
      pauses++;
      // What the event loop runs meanwhile: a task queued before the pause runs before it ends.
      await new Promise<void>((resolve) => setImmediate(() => (between++, resolve())));
    });
    // Two passes over the cities for each of the two earlier terms.
    expect(pauses).toBeGreaterThanOrEqual(2 * 2 * Math.floor(count / 16_384));
    expect(between).toBe(pauses);
    expect([...composed]).toEqual([...new Orders(source).order(ordering)]);
    expect(orders.composes(ordering, 100, 110)).toBe(false);
  });

  it('shares one composition between requests for the same order', async () => {
    const orders = new Orders(source);
    let pauses = 0;
    const pause = async () => void pauses++;
    const [a, b] = await Promise.all([orders.compose(ordering, pause), orders.compose(ordering, pause)]);
    expect(a).toBe(b);
    const alone = new Orders(source);
    let alonePauses = 0;
    await alone.compose(ordering, async () => void alonePauses++);
    expect(pauses).toBe(alonePauses);
  });
});
