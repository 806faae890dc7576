import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import type { Collation } from '../src/core/collation.js';
import type { City } from '../src/core/fields.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { KIT, makeCity } from './helpers.js';

// A build holds its cities in the default ordering (CityIndex.inDefaultOrder), so that the site's
// dataset file lists them so and a server copies a default-order page as one run of bytes. The
// answers must not change: every ordering's ties still go to id ascending, not to positions.

const BASE = 'http://api.example.com';

/** Cities in an order that is neither by id nor by name: tied names and top flags, ids shuffled. */
function tiedShuffled(): City[] {
  const cities = Array.from({ length: 60 }, (_, i) =>
    makeCity(((i * 37) % 60) + 1, {
      name: `Name ${i % 4}`,
      name_en: `En ${i % 3}`,
      name_fr: i % 5 ? 'Même' : 'Autre',
      top: i % 7 === 0,
    }),
  );
  return cities;
}

const DATASETS: [string, () => Promise<CityTable>, Collation][] = [
  ['cities48 (locale)', async () => readDataset(join(KIT, 'cities48.json')), 'locale'],
  ['cities1234 (codepoint)', async () => readDataset(join(KIT, 'cities1234.json')), 'codepoint'],
  ['prefixed30 (locale)', async () => readDataset(join(KIT, 'prefixed30.json')), 'locale'],
  ['tied names, ids shuffled (codepoint)', async () => CityTable.fromCities(tiedShuffled()), 'codepoint'],
  ['tied names, ids shuffled (locale)', async () => CityTable.fromCities(tiedShuffled()), 'locale'],
];

const QUERIES = [
  '',
  'page=2',
  'page_size=7&page=3',
  'page_size=5000',
  'ordering=name_en&page_size=9&page=2',
  'ordering=-name_en&page_size=9',
  'ordering=name_fr,-name_en&page_size=11&page=2',
  'ordering=-top,name_ar,id&page_size=13',
  'ordering=name_fr,name_ar,-name_de&page_size=4&page=5',
  'ordering=-name_ru,top&page_size=8&page=2',
];

const answer = (index: CityIndex, query: string) =>
  Buffer.from(bodyBytes(answerListing(index, parseQuery(query), BASE).body)).toString();

describe('an index in the default order answers as the index it was made from', () => {
  it.each(DATASETS)(
    '%s: every query the same bytes; the cities lie in the default order',
    async (_, read, collation) => {
      const index = new CityIndex(await read(), collation);
      const ordered = index.inDefaultOrder();
      expect(ordered.count).toBe(index.count);
      for (const query of QUERIES) expect(answer(ordered, query), query).toBe(answer(index, query));
      expect([...ordered.single([])]).toEqual([...ordered.single([]).keys()]);
      // The same, loaded from the site's dataset file it writes (as a server loads it).
      const loaded = new CityIndex(
        CityTable.fromDatasetFile(Buffer.concat([...ordered.table.datasetParts()])),
        collation,
      );
      for (const query of QUERIES) expect(answer(loaded, query), query).toBe(answer(index, query));
      expect([...loaded.single([])]).toEqual([...loaded.single([]).keys()]);
    },
  );
});
