import { readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldsBetween, recordFold } from '../src/dataset/fold-journal.js';
import { datasetSignature } from '../src/dataset/known-ids.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-fold-journal-')));
afterAll(() => cleanup());

const LOG = { bytes: 10, digest: 'd' };

/** `folds` folds recorded of the file `data`, each changing it (its size and times) first: the signatures from the first. */
async function folded(data: string, folds: number): Promise<string[]> {
  const signatures = [await datasetSignature(data)];
  for (let i = 1; i <= folds; i++) {
    writeFileSync(data, 'x'.repeat(i));
    utimesSync(data, i, i);
    // The signature the fold's commit left, as commitFold passes it.
    signatures.push(await datasetSignature(data));
    await recordFold(data, { from: signatures.at(-2)!, cities: i, log: LOG }, signatures.at(-1)!);
  }
  return signatures;
}

// The folds of a dataset's log recorded beside it (`.NAME.folds`), and the chain of them from
// the file a build read to the file now: only a chain of recorded folds, and only the last 64 to 127.
describe('the fold journal', () => {
  let n = 0;
  it.each<[string, number, (signatures: string[], data: string) => [from: string, now: string], number[] | null]>([
    ['one fold from the file read to the file now', 1, (s) => [s[0]!, s[1]!], [1]],
    ['three folds', 3, (s) => [s[0]!, s[3]!], [1, 2, 3]],
    ['from the second of three', 3, (s) => [s[1]!, s[3]!], [2, 3]],
    ['the file now not where the chain ends (changed after its last fold)', 2, (s) => [s[0]!, `${s[2]}x`], null],
    ['no fold since: no chain (the file as read is not grown by a fold)', 2, (s) => [s[2]!, s[2]!], null],
    ['a file read no fold started from', 2, (s) => ['1:2:3:4', s[2]!], null],
    ['200 folds: the last ones chained', 200, (s) => [s[190]!, s[200]!], Array.from({ length: 10 }, (_, i) => 191 + i)],
    ['200 folds: the first ones forgotten (the journal kept short)', 200, (s) => [s[0]!, s[200]!], null],
    [
      'a torn line: the chain broken there',
      3,
      (s, data) => {
        const path = join(root, `.${data.split('/').at(-1)}.folds`);
        const lines = readFileSync(path, 'utf8').split('\n');
        writeFileSync(path, [lines[0], lines[1]!.slice(0, 20), lines[2], ''].join('\n'));
        return [s[0]!, s[3]!];
      },
      null,
    ],
  ])('%s', async (_, folds, ends, cities) => {
    const data = join(root, `cities-${++n}.csv`);
    writeFileSync(data, '');
    const signatures = await folded(data, folds);
    const [from, now] = ends(signatures, data);
    const chain = await foldsBetween(data, from, now);
    expect(chain?.map((fold) => fold.cities) ?? null).toEqual(cities);
    const lines = readFileSync(join(root, `.cities-${n}.csv.folds`), 'utf8').split('\n').length - 1;
    expect(lines).toBeLessThanOrEqual(127);
  });

  // Its caller (commitFold) always has the signature its commit left: recordFold no longer reads the file
  // again for one (it did when `to` was left out, and chained a file it had not seen a fold leave).
  const FOLD = { from: '1:2:3:4', cities: 1, log: LOG };
  it.each<[string, (data: string, to: string) => Promise<void>, number[] | null]>([
    ['with the signature its commit left: chained to it', (data, to) => recordFold(data, FOLD, to), [1]],
    [
      'without it (a type error): no signature read for it, nothing chained',
      // @ts-expect-error `to` is required
      (data) => recordFold(data, FOLD),
      null,
    ],
  ])('recordFold %s', async (label, record, cities) => {
    const data = join(root, `record-${label.length}.csv`);
    writeFileSync(data, '');
    const now = await datasetSignature(data);
    await record(data, now);
    expect((await foldsBetween(data, FOLD.from, now))?.map((fold) => fold.cities) ?? null).toEqual(cities);
  });

  it('a journal that is a link to a file of the user: that file left as it was, the fold not recorded', async () => {
    const data = join(root, 'linked.csv');
    const theirs = join(root, 'notes.txt');
    writeFileSync(data, '');
    writeFileSync(theirs, 'mine\n');
    symlinkSync(theirs, join(root, '.linked.csv.folds'));
    const signatures = await folded(data, 1);
    expect(readFileSync(theirs, 'utf8')).toBe('mine\n');
    expect(await foldsBetween(data, signatures[0]!, signatures[1]!)).toBeNull();
  });
});
