import { describe, expect, it, vi } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Collation } from '../src/core/collation.js';
import { NAME_FIELDS, type City } from '../src/core/fields.js';
import { parseOrdering } from '../src/core/ordering.js';
import { OverlayIndex } from '../src/core/overlay-index.js';
import { seededRandom } from './crash-helpers.js';
import { makeCity } from './helpers.js';

// An index with cities added beside it (a POST) answers every ordering and page as an index of
// the longer dataset built from scratch: the same cities, by id, at every position.

const WORDS = ['Ábc', 'abc', 'Zed', 'zed', 'Éclair', 'eclair', 'Öl', 'ol', '北京', 'Ω', 'a', 'B', 'Zz', 'ab'];
const ORDERINGS = [
  '',
  'name_en',
  '-name_en',
  'name_fr',
  '-name_ar',
  'name_en,-name_fr',
  '-name_de,name_en',
  'name_fr,name_en,-name_ar',
];

function cities(n: number, from: number, random: () => number): City[] {
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  return Array.from({ length: n }, (_, i) =>
    makeCity(from + i, { name: word(), name_fr: word(), name_ar: word(), top: random() < 0.3 }),
  );
}

/** Ids at every position of every ordering, read page by page (and in one page of every city) through `positions`. */
function answers(
  index: { count: number; positions: CityIndex['positions'] },
  ids: (p: number) => number,
  size: number,
) {
  return ORDERINGS.map((o) => {
    const ordering = parseOrdering(o);
    const pages: number[][] = [];
    for (let start = 0; start < index.count; start += size)
      pages.push([...index.positions(ordering, start, Math.min(index.count, start + size))].map(ids));
    return { ordering: o || 'default', pages, whole: [...index.positions(ordering, 0, index.count)].map(ids) };
  });
}

function idsOf(index: OverlayIndex): (p: number) => number {
  const n = index.base.count;
  return (p) => (p < n ? index.base.table.ids[p]! : index.added.ids[p - n]!);
}

describe('OverlayIndex answers as a fresh index of the base and the added cities', () => {
  it.each<[Collation, number, number, number, number]>([
    ['codepoint', 0, 5, 3, 2],
    ['codepoint', 40, 7, 3, 10],
    ['locale', 40, 7, 3, 7],
    ['locale', 1, 1, 3, 1],
    ['locale', 60, 48, 16, 9],
    ['codepoint', 30, 40, 40, 100],
    ['locale', 2, 30, 16, 4],
    ['codepoint', 3, 30, 1, 5],
    ['codepoint', 200, 60, 7, 13],
  ])('%s collation, %d cities then %d added in batches of %d, pages of %d', (collation, start, added, batch, size) => {
    const random = seededRandom(start * 31 + added + batch);
    const first = cities(start, 1, random);
    const base = new CityIndex(CityTable.fromCities(first), collation);
    const more = cities(added, start + 1, random);
    let index = OverlayIndex.over(base, more.slice(0, batch));
    // Orderings read between batches, so later batches extend placements already made.
    for (let i = batch; i < more.length; i += batch) {
      answers(index, idsOf(index), size);
      index = index.with(more.slice(i, i + batch));
    }
    const fresh = new CityIndex(CityTable.fromCities([...first, ...more]), collation);
    expect(answers(index, idsOf(index), size)).toEqual(answers(fresh, (p) => fresh.table.ids[p]!, size));
    expect(index.count).toBe(first.length + more.length);
  });

  it('two overlays extending one answer each its own cities (keys they computed are not mixed)', () => {
    const random = seededRandom(11);
    const first = cities(50, 1, random);
    const base = new CityIndex(CityTable.fromCities(first), 'locale');
    const parent = OverlayIndex.over(base, cities(5, 51, random));
    const [a, b] = [cities(6, 56, random), cities(6, 56, random)];
    const left = parent.with(a);
    answers(left, idsOf(left), 10);
    const right = parent.with(b);
    for (const [index, mine] of [
      [left, a],
      [right, b],
    ] as const) {
      const all = [...first, ...parent.added.toCities(), ...mine];
      const fresh = new CityIndex(CityTable.fromCities(all), 'locale');
      expect(answers(index, idsOf(index), 10)).toEqual(answers(fresh, (p) => fresh.table.ids[p]!, 10));
    }
  });
});

describe('an overlay on an index whose ranks were read from the site (presorted)', () => {
  it.each<[Collation]>([['codepoint'], ['locale']])(
    '%s: answers as a fresh index, and no field of the base is ranked again on a request',
    (collation) => {
      const random = seededRandom(7);
      const first = cities(50, 1, random);
      const table = CityTable.fromCities(first);
      // The site's rank files stand for a source made by a full index of the same table.
      const site = new CityIndex(table, collation);
      for (const field of NAME_FIELDS) site.ranks(field);
      const more = cities(20, 51, random);
      const index = OverlayIndex.over(new CityIndex(table, collation, site), more);
      const ranked = vi.spyOn(CityTable.prototype, 'names');
      try {
        const got = answers(index, idsOf(index), 8);
        expect(ranked, 'a field ranked on first use').not.toHaveBeenCalled();
        const fresh = new CityIndex(CityTable.fromCities([...first, ...more]), collation);
        expect(got).toEqual(answers(fresh, (p) => fresh.table.ids[p]!, 8));
      } finally {
        ranked.mockRestore();
      }
    },
  );
});

describe('OverlayIndex.prepare', () => {
  it.each([
    ['a multi-field ordering whose base order is not composed', 'name_fr,-name_ar', true],
    ['a one-field ordering (its order is kept)', '-name_fr', false],
    ['the default ordering', '', false],
  ])('%s (ordering "%s"): prepared beforehand %s, then answered as a fresh index', async (_, ordering, prepared) => {
    const random = seededRandom(3);
    const first = cities(6000, 1, random);
    const base = new CityIndex(CityTable.fromCities(first), 'codepoint');
    const more = cities(9, 6001, random);
    const index = OverlayIndex.over(base, more);
    const pairs: [string, string][] = [
      ['ordering', ordering],
      ['page_size', '25'],
      ['page', '3'],
    ];
    const waiting = index.prepare(pairs, () => new Promise((resolve) => setImmediate(resolve)));
    expect(waiting !== null).toBe(prepared);
    await waiting;
    expect(
      index.prepare(pairs, async () => undefined),
      'prepared once',
    ).toBeNull();
    const fresh = new CityIndex(CityTable.fromCities([...first, ...more]), 'codepoint');
    const o = parseOrdering(ordering);
    expect([...index.positions(o, 50, 75)].map(idsOf(index))).toEqual(
      [...fresh.positions(o, 50, 75)].map((p) => fresh.table.ids[p]!),
    );
  });
});

describe('CityIndex.prepare: only an ordering of two fields or more is composed beforehand', () => {
  it.each([
    ['a multi-field ordering not composed yet', 'name_fr,-name_ar', true],
    ['a one-field ordering', '-name_fr', false],
    ['the default ordering', undefined, false],
    ['a comma, but one field named twice', 'name_fr,name_fr', false],
    ['a comma, and one field with an unknown one', 'name_fr,colour', false],
  ])('%s', async (_, ordering, prepared) => {
    // Every French name alike: a multi-field page's ties on its first field are all 5,000 cities (beyond the 4,096 a window sorts).
    const tied = cities(5000, 1, seededRandom(5)).map((city) => ({ ...city, name_fr: 'x' }));
    const index = new CityIndex(CityTable.fromCities(tied), 'codepoint');
    const pairs: [string, string][] = [
      ...(ordering === undefined ? [] : [['ordering', ordering] as [string, string]]),
      ['page_size', '25'],
      ['page', '3'],
    ];
    const waiting = index.prepare(pairs, () => new Promise((resolve) => setImmediate(resolve)));
    expect(waiting !== null).toBe(prepared);
    await waiting;
    expect(index.prepare(pairs, async () => undefined)).toBeNull();
  });
});
