import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HeldIndex, siteEntries } from '../src/app/site-entries.js';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { bodyBytes } from '../src/core/page.js';
import { ROUTES } from '../src/core/route-table.js';
import { allPageFiles, pageFiles } from '../src/site/pages.js';
import { siteSpec, type SiteSpec } from '../src/site/spec.js';
import type { SiteEntry } from '../src/store/site-writer.js';
import { makeCity, tempDir } from './helpers.js';

const TAG = '0123456789abcdef';
const ORDERINGS = ['default', 'name_en', '-name_en', 'name_ar', '-name_ar'];
const spec: SiteSpec = siteSpec(
  {
    baseUrl: 'http://x.test',
    collation: 'codepoint',
    pageSizes: [10, 100],
    orderings: ORDERINGS,
    defaultPageSize: 10,
    compression: 'fast',
    liveUrl: null,
  },
  700,
);
const indexOf = () =>
  new CityIndex(
    CityTable.fromCities(
      Array.from({ length: spec.count }, (_, i) =>
        makeCity(i + 1, { name_en: `e${(i * 31) % 97}`, name_ar: `a${(i * 17) % 89}` }),
      ),
    ),
    'codepoint',
  );

let temp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => (temp = await tempDir()));
afterEach(() => temp.cleanup());

/** Writes an entry under the temp dir as the site writer would, then says it is placed. */
async function place(entry: SiteEntry): Promise<void> {
  const file = join(temp.dir, entry.path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(
    file,
    bodyBytes(
      typeof entry.body === 'string'
        ? [Buffer.from(entry.body)]
        : entry.body instanceof Uint8Array
          ? [entry.body]
          : entry.body,
    ),
  );
  entry.placed?.({ file });
}

describe('siteEntries: first what the dataset makes, then the pages read back', () => {
  it('gives every file of the site, each page as the whole dataset answers it, none twice', async () => {
    const index = indexOf();
    const expected = new Map<string, string>();
    for (const file of [...allPageFiles(index, spec), ...pageFiles(spec.count, () => index, spec)])
      expected.set(file.path, Buffer.from(bodyBytes(file.body)).toString());
    const got = new Map<string, string>();
    for await (const entry of siteEntries(new HeldIndex(index), spec, TAG)) {
      expect(got.has(entry.path)).toBe(false);
      await place(entry);
      got.set(
        entry.path,
        Buffer.from(
          bodyBytes(typeof entry.body === 'string' ? [Buffer.from(entry.body)] : (entry.body as Iterable<Uint8Array>)),
        ).toString(),
      );
    }
    for (const [path, body] of expected) expect(got.get(path), path).toBe(body);
    expect(got.has(ROUTES.extras.dataset)).toBe(true);
  });

  it('makes no other page before every page of every city is placed, and lets the dataset go', async () => {
    const data = new HeldIndex(indexOf());
    const entries = siteEntries(data, spec, TAG);
    const unplaced: SiteEntry[] = [];
    let tracked = 0;
    let most = 0;
    let pending = entries.next();
    for (;;) {
      const next = await Promise.race([
        pending,
        new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 100)),
      ]);
      if (next === 'waiting') {
        expect(unplaced.length).toBeGreaterThan(0);
        await place(unplaced.shift()!);
        continue;
      }
      const entry = next.value as SiteEntry;
      pending = entries.next();
      if (entry.placed) {
        tracked++;
        unplaced.push(entry);
        most = Math.max(most, unplaced.length);
      } else if (entry.compress) {
        // The first page read back: every page of every city was placed before it was made.
        expect([unplaced, tracked]).toEqual([[], ORDERINGS.length]);
        break;
      } else await place(entry);
    }
    // Two pages of every city at a time: the next waited for one of them.
    expect(most).toBe(2);
    expect(() => data.index).toThrow(/used once let go/);
    await entries.return(undefined);
  });

  it('a page of every city that cannot be written stops the entries with its error', async () => {
    const entries = siteEntries(new HeldIndex(indexOf()), spec, TAG);
    await expect(
      (async () => {
        for await (const entry of entries) {
          if (entry.placed) entry.placed({ error: new Error('disk on fire') });
          else await place(entry);
        }
      })(),
    ).rejects.toThrow('disk on fire');
  });
});
