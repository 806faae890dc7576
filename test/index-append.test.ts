import { describe, expect, it, vi } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Collation } from '../src/core/collation.js';
import { NAME_FIELDS, type City } from '../src/core/fields.js';
import { parseOrdering } from '../src/core/ordering.js';
import { seededRandom } from './crash-helpers.js';
import { makeCity } from './helpers.js';

// An index extended city by city (a POST) answers every ordering as one built from scratch.

const WORDS = ['Ábc', 'abc', 'Zed', 'zed', 'Éclair', 'eclair', 'Öl', 'ol', '北京', 'Ω', 'a', 'B'];
const ORDERINGS = ['', 'name_en', '-name_en', 'name_fr', '-name_ar', 'name_en,-name_fr', '-name_de,name_en'];

function cities(n: number, from: number, random: () => number): City[] {
  return Array.from({ length: n }, (_, i) =>
    makeCity(from + i, {
      name: WORDS[Math.floor(random() * WORDS.length)]!,
      name_fr: WORDS[Math.floor(random() * WORDS.length)]!,
      top: random() < 0.3,
    }),
  );
}

describe('CityIndex.appended answers as a fresh index of the longer table', () => {
  it.each<[Collation, number, number, number]>([
    ['codepoint', 0, 5, 3],
    ['codepoint', 40, 7, 3],
    ['locale', 40, 7, 3],
    ['locale', 1, 1, 3],
    ['locale', 60, 48, 16],
    ['codepoint', 30, 40, 40],
    ['locale', 2, 30, 16],
    ['codepoint', 3, 30, 30],
  ])('%s collation, %d cities then %d appended in batches of %d', (collation, start, added, batch) => {
    const random = seededRandom(start * 31 + added);
    const first = cities(start, 1, random);
    let table = CityTable.fromCities(first);
    let index = new CityIndex(table, collation);
    // Use every ordering first, so the index keeps ranks and orders to extend.
    for (const o of ORDERINGS) index.order(parseOrdering(o));
    const more = cities(added, start + 1, random);
    for (let i = 0; i < more.length; i += batch) {
      table = table.appended(more.slice(i, i + batch));
      index = index.appended(table);
    }
    const fresh = new CityIndex(CityTable.fromCities([...first, ...more]), collation);
    for (const o of ORDERINGS)
      expect([...index.order(parseOrdering(o))], `ordering ${o || 'default'}`).toEqual([
        ...fresh.order(parseOrdering(o)),
      ]);
    expect(table.toCities()).toEqual([...first, ...more]);
  });
});

describe('an index whose ranks were read from the site (presorted), then appended to (a POST)', () => {
  it.each<[Collation]>([['codepoint'], ['locale']])(
    '%s: answers as a fresh index, and no field is ranked again on a request',
    (collation) => {
      const random = seededRandom(7);
      const first = cities(50, 1, random);
      let table = CityTable.fromCities(first);
      // The site's rank files stand for a source made by a full index of the same table.
      const site = new CityIndex(table, collation);
      for (const field of NAME_FIELDS) site.ranks(field);
      let index = new CityIndex(table, collation, site);
      const more = cities(20, 51, random);
      table = table.appended(more);
      index = index.appended(table);
      const ranked = vi.spyOn(CityTable.prototype, 'names');
      try {
        const answers = ORDERINGS.map((o) => [...index.order(parseOrdering(o))]);
        expect(ranked, 'a field ranked on first use').not.toHaveBeenCalled();
        const fresh = new CityIndex(CityTable.fromCities([...first, ...more]), collation);
        expect(answers).toEqual(ORDERINGS.map((o) => [...fresh.order(parseOrdering(o))]));
      } finally {
        ranked.mockRestore();
      }
    },
  );
});
