import { mkdir, truncate, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { parseOrdering } from '../src/core/ordering.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { allPageFiles } from '../src/site/pages.js';
import { AllPageReader, type AllPageFile } from '../src/store/all-page-reader.js';
import { makeCity, tempDir } from './helpers.js';

const BASE = 'http://x.test';
const ORDERINGS = ['default', 'name_ar', '-name_en'];

/** A dataset's pages of every city written under `dir`, and a reader of them. */
async function readerOf(
  dir: string,
  count: number,
): Promise<{ index: CityIndex; reader: AllPageReader; files: Map<string, AllPageFile> }> {
  const cities = Array.from({ length: count }, (_, i) =>
    makeCity(i + 1, { name_en: `n${(i * 7919) % 1000}`, name_ar: `${'ع'.repeat(i % 9)}${i % 13}`, top: i % 5 === 0 }),
  );
  const index = new CityIndex(CityTable.fromCities(cities), 'codepoint');
  const files = new Map<string, AllPageFile>();
  for (const page of allPageFiles(index, { baseUrl: BASE, pageSizes: [10], orderings: ORDERINGS })) {
    const file = join(dir, page.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bodyBytes(page.body));
    files.set(page.ordering, {
      file,
      order: index.order(parseOrdering(page.ordering === 'default' ? undefined : page.ordering)),
    });
  }
  return { index, reader: new AllPageReader(count, index.table.jsonLengths(), files), files };
}

const answerOf = (index: Parameters<typeof answerListing>[0], query: string) =>
  Buffer.from(bodyBytes(answerListing(index, parseQuery(query), BASE).body)).toString();

describe("AllPageReader: a build's pages read back from its pages of every city", () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let built: Awaited<ReturnType<typeof readerOf>>;
  beforeAll(async () => {
    temp = await tempDir();
    built = await readerOf(temp.dir, 1234);
  });
  afterAll(async () => {
    built.reader.close();
    await temp.cleanup();
  });

  it.each([
    ['the first page of the default ordering', ''],
    ['a middle page', 'page=7&page_size=13'],
    ['the last page, partly filled', 'ordering=name_ar&page=last&page_size=100'],
    ['one city a page, the very last', 'ordering=-name_en&page_size=1&page=1234'],
    ['a page large enough to be produced in parts (over 500 cities)', 'ordering=name_ar&page_size=700&page=2'],
    ['every city on one page', 'ordering=-name_en&page_size=5000'],
    ['back to an ordering read before', 'page=3'],
    ['a page past the last (404)', 'page=999'],
  ])('answers as the whole dataset does: %s', (_, query) => {
    expect(answerOf(built.reader.indexFor(parseQuery(query)), query)).toBe(answerOf(built.index, query));
  });

  it('a page produced in parts keeps its own cities while other pages are read', () => {
    const query = 'ordering=name_ar&page_size=600&page=1';
    const { body } = answerListing(built.reader.indexFor(parseQuery(query)), parseQuery(query), BASE);
    for (const other of ['page=2', 'ordering=-name_en&page_size=600&page=2'])
      answerOf(built.reader.indexFor(parseQuery(other)), other);
    expect(Buffer.from(bodyBytes(body)).toString()).toBe(answerOf(built.index, query));
  });

  it('the index it gives answers only its own page', () => {
    const index = built.reader.indexFor(parseQuery('page=2'));
    expect(() => answerListing(index, parseQuery('page=3'), BASE)).toThrow(/holds another page/);
  });

  it('an empty dataset has its one empty page', async () => {
    const empty = await tempDir();
    const { index, reader } = await readerOf(empty.dir, 0);
    expect(answerOf(reader.indexFor([]), '')).toBe(answerOf(index, ''));
    reader.close();
    await empty.cleanup();
  });

  it.each([
    ['cut short', (file: string) => truncate(file, 1000)],
    ['shifted by a byte', (file: string) => writeFile(file, ` ${'x'.repeat(300_000)}`)],
  ])('a page of every city changed under the build (%s) is an error, never a wrong page', async (_, change) => {
    const changed = await tempDir();
    const { reader, files } = await readerOf(changed.dir, 1234);
    await change(files.get('name_ar')!.file);
    expect(() => reader.indexFor(parseQuery('ordering=name_ar&page=100'))).toThrow(
      /no longer holds the cities this build wrote there/,
    );
    reader.close();
    await changed.cleanup();
  });
});
