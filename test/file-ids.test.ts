import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileIds } from '../src/dataset/file-ids.js';
import { makeCity, tempDir } from './helpers.js';

// Which logged cities a dataset file lacks, and the largest id in it, are asked of its ids sorted
// (a binary search for each), never of a Set of them all built on the thread that answers: the
// answers a Set and Math.max over every id (from 0) gave. Small files: read on this thread.

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('cities-file-ids-')));
afterAll(() => cleanup());

describe("a dataset file's ids: the largest, and which of some ids it holds", () => {
  const asked = [-4, -3, 0, 1, 2, 3, 5, 9, 10, 2 ** 40, 2 ** 40 + 1];
  it.each<[string, number[]]>([
    ['ids in no order, one negative', [5, 2, 9, -3]],
    ['ids in order', [1, 2, 3]],
    ['negative ids only: the largest is 0 (new ids are chosen from 1)', [-4, -3]],
    ['no city: the largest is 0, none held', []],
    ['one city', [9]],
    ['ids past 2^32 (the search halves with >>> on indexes, not ids)', [2 ** 40, 3, 2 ** 40 + 1]],
  ])('%s', async (label, ids) => {
    const file = join(dir, `${label.replace(/\W+/g, '-')}.json`);
    await writeFile(file, JSON.stringify(ids.map((id) => makeCity(id))));
    const held = await fileIds(file);
    const set = new Set(ids);
    expect({ last: held.last, held: asked.filter((id) => held.has(id)) }).toEqual({
      last: Math.max(0, ...ids),
      held: asked.filter((id) => set.has(id)),
    });
  });
});

describe("a file's ids with those a fold appended (FileIds.with): the same as the file read again", () => {
  it.each<[string, number[], number[]]>([
    ['added past every id', [1, 2, 3], [7, 9]],
    ['added between and before them, in no order', [2, 5, 9], [6, -1, 3]],
    ['added to a file with no city', [], [4]],
    ['nothing added', [5, 2], []],
    ['ids past 2^32 among them', [3, 2 ** 40], [2 ** 40 + 1, 2 ** 33]],
  ])('%s', async (label, ids, added) => {
    const file = join(dir, `with-${label.replace(/\W+/g, '-')}.json`);
    await writeFile(file, JSON.stringify(ids.map((id) => makeCity(id))));
    const merged = (await fileIds(file)).with(added);
    await writeFile(file, JSON.stringify([...ids, ...added].map((id) => makeCity(id))));
    const reread = await fileIds(file);
    const asked = [...ids, ...added].flatMap((id) => [id - 1, id, id + 1]);
    expect({ last: merged.last, held: asked.filter((id) => merged.has(id)) }).toEqual({
      last: reread.last,
      held: asked.filter((id) => reread.has(id)),
    });
  });
});
