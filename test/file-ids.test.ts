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
