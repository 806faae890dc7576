import { realpathSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CityLog } from '../src/dataset/city-log.js';
import { IDS_THREAD_FROM } from '../src/dataset/file-ids.js';
import { foldLogged, withLogged } from '../src/dataset/log-fold.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { makeCity, tempDir } from './helpers.js';

// serve --watch (not writable) learns which logged cities the dataset file lacks on each change of
// its log: a large file (140,000 cities: seconds) is read in a thread, never on the thread that
// answers requests (issue #26); the thread runs lib/, so this thread's readDataset is never called.

vi.mock('../src/dataset/read-dataset.js', async (original) => {
  const actual = await original<typeof import('../src/dataset/read-dataset.js')>();
  return { ...actual, readDataset: vi.fn(actual.readDataset) };
});

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-watch-log-thread-')));
afterAll(() => cleanup());

/** A JSON dataset of `count` cities, and the same with one more city (id 99999) logged beside it. */
async function logged(name: string, count: number): Promise<string> {
  const data = join(root, `${name}.json`);
  const cities = Array.from({ length: count }, (_, i) => makeCity(i + 1));
  await writeFile(data, JSON.stringify(cities));
  await CityLog.of(realpathSync(data)).append([makeCity(99999, { name: 'Logged' })]);
  return data;
}

/** What withLogged stages for a server that does not write the dataset (removed once read). */
async function staged(data: string): Promise<string> {
  const source = await withLogged(data);
  const text = await readFile(source.path, 'utf8');
  await source.discard();
  return text;
}

describe('the logged cities a dataset file lacks, learned off the answering thread when it is large', () => {
  it.each<[string, number, (data: string) => Promise<string>, boolean]>([
    ['withLogged (serve --watch), a large file: staged with the logged city', 3000, staged, false],
    [
      'foldLogged (before a build or a server reads the file), a large file: folded in',
      3000,
      async (data) => {
        await foldLogged(data, 1000, () => {});
        return readFile(data, 'utf8');
      },
      false,
    ],
    ['withLogged, a small file: read here (a thread would cost more than the read)', 10, staged, true],
  ])('%s', async (label, count, run, readHere) => {
    const data = await logged(label.replace(/\W+/g, '-'), count);
    const size = (await readFile(data)).length;
    expect(size >= IDS_THREAD_FROM).toBe(!readHere);
    vi.mocked(readDataset).mockClear();
    const text = await run(data);
    expect({ logged: text.includes('"Logged"'), readHere: vi.mocked(readDataset).mock.calls.length > 0 }).toEqual({
      logged: true,
      readHere,
    });
    await rm(data);
  });
});
