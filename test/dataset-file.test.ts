import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityWriter } from '../src/dataset/city-writer.js';
import type { NewCity } from '../src/post/create-city.js';
import { appendCities, commitStaged, DatasetChanged, stageAppend } from '../src/dataset/append-cities.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { makeCity, tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-dataset-file-')));
afterAll(() => cleanup());

const DEAD_PID = 2 ** 22 + 7;

describe('appendCities keeps the dataset and its backup whole', () => {
  it.each([
    ['a JSON dataset', 'cities.json', `[\n  ${JSON.stringify(makeCity(1))}\n]\n`],
    ['a CSV dataset', 'cities.csv', null],
  ])('%s: the new city is appended, FILE.bak holds the old bytes, no temporary file is left', async (_, name, text) => {
    const file = join(root, name);
    if (text) await writeFile(file, text);
    else await appendCitiesToNewCsv(file);
    const before = await readFile(file);
    const beforeIno = (await stat(file)).ino;
    await appendCities(file, [makeCity(2)]);
    expect((await readDataset(file)).count).toBe(2);
    expect((await readFile(`${file}.bak`)).equals(before)).toBe(true);
    expect((await stat(`${file}.bak`)).ino).toBe(beforeIno);
    expect((await readdir(root)).filter((n) => n.startsWith(`.${name}.`))).toEqual([]);
  });

  it('removes temporary files that killed writers left beside the dataset, not live ones', async () => {
    const file = join(root, 'left.json');
    await writeFile(file, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
    await writeFile(join(root, `.left.json.tmp-${DEAD_PID}`), '[');
    await writeFile(join(root, `.left.json.bak-${DEAD_PID}`), '[');
    await writeFile(join(root, `.left.json.tmp-${process.ppid}`), '[');
    await appendCities(file, [makeCity(2)]);
    expect((await readdir(root)).filter((n) => n.startsWith('.left.json.'))).toEqual([
      `.left.json.tmp-${process.ppid}`,
    ]);
  });
});

async function appendCitiesToNewCsv(file: string): Promise<void> {
  await writeFile(file, '');
  const city = makeCity(1);
  const header = Object.keys(city);
  const value = (v: unknown) => (v === null ? '' : String(v));
  await writeFile(file, `${header.join(',')}\n${header.map((k) => value(city[k as keyof typeof city])).join(',')}\n`);
}

describe('a staged dataset replaces the file only if the reader reads it back, and only if the file did not change meanwhile', () => {
  const jsonDataset = async (name: string) => {
    const file = join(root, name);
    await writeFile(file, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
    return file;
  };

  it.each([
    ['an id past 2^53-1', makeCity(2 ** 53)],
    ['a name of 256 characters', makeCity(2, { name_en: 'x'.repeat(256) })],
    ['an empty name', makeCity(2, { name_fr: '' })],
    ['a coordinate with 7 decimal places', makeCity(2, { longitude: 1.1234567 })],
  ])('%s: refused before anything is written (.json and .csv)', async (label, city) => {
    for (const ext of ['json', 'csv']) {
      const file = join(root, `refused-${label.replaceAll(' ', '-')}.${ext}`);
      if (ext === 'json') await writeFile(file, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
      else await appendCitiesToNewCsv(file);
      const before = await readFile(file);
      await expect(stageAppend(file, [city])).rejects.toThrow(
        /cannot be stored in the dataset as it is .*; nothing was written/,
      );
      expect((await readFile(file)).equals(before)).toBe(true);
      expect((await readdir(root)).filter((n) => n.startsWith(`.${basename(file)}.`))).toEqual([]);
    }
  });

  it('the file changed after staging: the commit refuses, keeps that change, and drops the staged file', async () => {
    const file = await jsonDataset('changed.json');
    const staged = await stageAppend(file, [makeCity(2)]);
    await writeFile(file, `[\n  ${JSON.stringify(makeCity(7))}\n]\n`);
    await expect(commitStaged(staged)).rejects.toBeInstanceOf(DatasetChanged);
    expect((await readDataset(file)).toCities().map((c) => c.id)).toEqual([7]);
    expect((await readdir(root)).filter((n) => n.startsWith('.changed.json.') || n === 'changed.json.bak')).toEqual([]);
  });

  it("the new file keeps the old one's permissions", async () => {
    const file = await jsonDataset('mode.json');
    await chmod(file, 0o640);
    await appendCities(file, [makeCity(2)]);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
  });
});

describe('CityWriter: a creation is in the file and published, or nowhere', () => {
  const city = (name: string): NewCity => {
    const { id: _, created_at: __, updated_at: ___, ...rest } = makeCity(0, { name });
    return rest;
  };

  it('the file is edited by hand while the site is rebuilt: 503 "changed", the edit kept, the site published again from the file', async () => {
    const file = join(root, 'hand-edit.json');
    await writeFile(file, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
    const published: string[] = [];
    const writer = new CityWriter(file, {
      lockWait: 1000,
      publish: async (data) => {
        published.push(data === file ? 'the file' : 'the staged dataset');
        if (data !== file) await writeFile(file, `[\n  ${JSON.stringify(makeCity(9))}\n]\n`);
      },
    });
    const refused = await writer.create(city('New')).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 503,
      retryAfter: 1,
      detail: 'The data changed while the city was being added; nothing was written. Try again.',
    });
    expect(published).toEqual(['the staged dataset', 'the file']);
    expect((await readDataset(file)).toCities().map((c) => c.id)).toEqual([9]);
    expect(await writer.create(city('Then'))).toMatchObject({ id: 10, name_en: 'Then' });
  });

  it('publishing the staged dataset fails: the creation fails, the file is untouched, nothing is left beside it', async () => {
    const file = join(root, 'unpublished.json');
    await writeFile(file, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
    const before = await readFile(file);
    let fail = true;
    const writer = new CityWriter(file, {
      lockWait: 1000,
      publish: async () => {
        if (fail) throw new Error('ENOSPC: no space left on device');
      },
    });
    await expect(writer.create(city('Lost'))).rejects.toThrow(/ENOSPC/);
    expect((await readFile(file)).equals(before)).toBe(true);
    expect((await readdir(root)).filter((n) => n.includes('unpublished.json') && n !== 'unpublished.json')).toEqual([]);
    fail = false;
    expect(await writer.create(city('Kept'))).toMatchObject({ id: 2 });
  });
});
