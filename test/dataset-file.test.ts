import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendCities } from '../src/dataset-file.js';
import { readDataset } from '../src/read-dataset.js';
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
    expect((await readdir(root)).filter((n) => n.startsWith('.left.json.'))).toEqual([`.left.json.tmp-${process.ppid}`]);
  });
});

async function appendCitiesToNewCsv(file: string): Promise<void> {
  await writeFile(file, '');
  const city = makeCity(1);
  const header = Object.keys(city);
  const value = (v: unknown) => (v === null ? '' : String(v));
  await writeFile(file, `${header.join(',')}\n${header.map((k) => value(city[k as keyof typeof city])).join(',')}\n`);
}
