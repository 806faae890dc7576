import { readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { wordingOf } from '../src/core/errors.js';
import { CityLog } from '../src/dataset/city-log.js';
import { fileIds, IDS_THREAD_FROM } from '../src/dataset/file-ids.js';
import { foldLogged, withLogged } from '../src/dataset/log-fold.js';
import { LoggedCityWriter } from '../src/dataset/logged-writer.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import type { CreateRefused } from '../src/post/city-store.js';
import type { NewCity } from '../src/post/create-city.js';
import { makeCity, tempDir } from './helpers.js';

// serve --watch (not writable) learns which logged cities the dataset file lacks on each change of
// its log, and serve --writable its ids whenever another process changed the file: a large file
// (140,000 cities: seconds) is read in a thread, never on the thread that answers requests (issue
// #26); the thread runs lib/, so this thread's readDataset is never called. Nor does serve --watch
// read the file whole (readFile) to stage it with the logged cities, nor a fold (serve --writable's
// catch-up, its start and close, a build's foldLogged) to fold them in: each copies it, and a
// commit checks the file's signature (inode, size, times), not its bytes.

vi.mock('../src/dataset/read-dataset.js', async (original) => {
  const actual = await original<typeof import('../src/dataset/read-dataset.js')>();
  return { ...actual, readDataset: vi.fn(actual.readDataset) };
});
// Counted: each call is a read of the whole file (in a thread when large).
vi.mock('../src/dataset/file-ids.js', async (original) => {
  const actual = await original<typeof import('../src/dataset/file-ids.js')>();
  return { ...actual, fileIds: vi.fn(actual.fileIds) };
});
// A hook run as a commit syncs its directory: right after its rename, before the fold takes the file's signature.
const commit = vi.hoisted(() => ({ syncing: undefined as (() => void) | undefined }));
vi.mock('../src/fs/file-output.js', async (original) => {
  const actual = await original<typeof import('../src/fs/file-output.js')>();
  return { ...actual, syncDirectory: async (dir: string) => (commit.syncing?.(), actual.syncDirectory(dir)) };
});
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof import('node:fs/promises')>();
  return { ...actual, readFile: vi.fn(actual.readFile) };
});

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-watch-log-thread-')));
afterAll(() => cleanup());

/** A JSON dataset of cities 1 to `count`, then `more`. */
async function dataset(data: string, count: number, ...more: ReturnType<typeof makeCity>[]): Promise<void> {
  await writeFile(data, JSON.stringify([...Array.from({ length: count }, (_, i) => makeCity(i + 1)), ...more]));
}

/** A JSON dataset of `count` cities, and the same with one more city (id 99999) logged beside it. */
async function logged(name: string, count: number): Promise<string> {
  const data = join(root, `${name}.json`);
  await dataset(data, count);
  await CityLog.of(realpathSync(data)).append([makeCity(99999, { name: 'Logged' })]);
  return data;
}

/** A city as a POST creates it. */
const newCity = (name: string): NewCity => {
  const { id: _, created_at: __, updated_at: ___, ...rest } = makeCity(0, { name });
  return rest;
};

/** A writable server's writer, nothing built nor answered. */
const quietWriter = {
  lockWait: 1000,
  mark: async () => {},
  apply: async () => {},
  publish: async () => {},
  caughtUp: async () => {},
  log: () => {},
};

/** What withLogged stages for a server that does not write the dataset (removed once read; read here by readFileSync, not spied on). */
async function staged(data: string): Promise<string> {
  const source = await withLogged(data);
  const text = readFileSync(source.path, 'utf8');
  await source.discard();
  return text;
}

describe('the logged cities a dataset file lacks, learned off the answering thread when it is large', () => {
  // readHere: readDataset called on this thread; readWhole: the file read whole into its memory (readFile).
  it.each<[string, number, (data: string) => Promise<string>, { readHere: boolean; readWhole: boolean }]>([
    [
      'withLogged (serve --watch), a large file: staged with the logged city, from a copy of the file',
      3000,
      staged,
      { readHere: false, readWhole: false },
    ],
    [
      'foldLogged (before a build or a server reads the file), a large file: folded in from a copy of the file',
      3000,
      async (data) => {
        await foldLogged(data, 1000, () => {});
        return readFileSync(data, 'utf8');
      },
      { readHere: false, readWhole: false },
    ],
    [
      'LoggedCityWriter.open (serve --writable starting), a large file: the logged city folded in from a copy of the file',
      3000,
      async (data) => {
        const writer = await LoggedCityWriter.open(data, quietWriter);
        const text = readFileSync(data, 'utf8');
        await writer.close();
        return text;
      },
      { readHere: false, readWhole: false },
    ],
    [
      "serve --writable's catch-up, a large file: a POSTed city folded in from a copy of the file, then the file's signature checked",
      3000,
      async (data) => {
        await foldLogged(data, 1000, () => {});
        const writer = await LoggedCityWriter.open(data, quietWriter);
        vi.mocked(readFile).mockClear();
        await writer.create(newCity('Posted'));
        await writer.idle();
        // Read before close(), whose own fold would add it.
        const text = readFileSync(data, 'utf8');
        await writer.close();
        return text.includes('"Posted"') ? text : 'the POSTed city not folded in';
      },
      { readHere: false, readWhole: false },
    ],
    [
      'withLogged, a small file: its ids read here (a thread would cost more than the read)',
      10,
      staged,
      { readHere: true, readWhole: false },
    ],
  ])('%s', async (label, count, run, expected) => {
    const data = await logged(label.replace(/\W+/g, '-').slice(0, 60), count);
    const size = (await stat(data)).size;
    expect(size >= IDS_THREAD_FROM).toBe(!expected.readHere);
    vi.mocked(readDataset).mockClear();
    vi.mocked(readFile).mockClear();
    const text = await run(data);
    expect({
      logged: text.includes('"Logged"'),
      readHere: vi.mocked(readDataset).mock.calls.length > 0,
      readWhole: vi.mocked(readFile).mock.calls.some(([path]) => path === realpathSync(data)),
    }).toEqual({ logged: true, ...expected });
    await rm(data);
  });
});

describe('serve --writable: its dataset file changed by another process, the ids read off the answering thread when it is large', () => {
  /** How the file is changed: before the POST (KnownIds.look reads it), or once it is logged and answered, before its fold (datasetNow reads it). */
  type Change = { before?: (data: string, count: number) => Promise<void>; applied?: typeof dataset };
  const added: Change['before'] = (data, count) => dataset(data, count, makeCity(9000));
  const invalid: Change['before'] = (data, count) => dataset(data, count, makeCity(9000, { latitude: 200 }));

  it.each<[string, number, Change, (data: string) => Promise<Record<string, unknown>>, boolean]>([
    [
      'look(): a larger id added before a POST: the city gets the id past it, folded in after it',
      3000,
      { before: added },
      async () => ({ created: 9001, last: [9000, 9001] }),
      false,
    ],
    [
      'datasetNow(): a city added between a POST and its fold: the logged city folded in after it',
      3000,
      { applied: (data, count) => dataset(data, count, makeCity(9000)) },
      async () => ({ created: 3001, last: [9000, 3001] }),
      false,
    ],
    [
      "look(): the file made invalid: the POST refused (500), readDataset's own error (file, record, field, value, why) in the log",
      3000,
      { before: invalid },
      async (data) => ({
        refused: 500,
        detail: 'A server error occurred.',
        logged: `POST failed (500): ${wordingOf(await readDataset(data).catch((e) => e))}`,
      }),
      false,
    ],
    [
      'look(), a small file: read here (a thread would cost more than the read)',
      10,
      { before: added },
      async () => ({ created: 9001, last: [9000, 9001] }),
      true,
    ],
  ])('%s', async (label, count, change, expected, readHere) => {
    const data = join(root, `${label.replace(/\W+/g, '-').slice(0, 60)}.json`);
    await dataset(data, count);
    const told: string[] = [];
    let applied = change.applied;
    const writer = await LoggedCityWriter.open(data, {
      lockWait: 1000,
      mark: async () => {},
      publish: async () => {},
      caughtUp: async () => {},
      log: (line) => told.push(line),
      // Once only: the next batch's look() must not be the read that is checked.
      apply: async () => void (await applied?.(data, count), (applied = undefined)),
    });
    await change.before?.(data, count);
    expect((await stat(data)).size >= IDS_THREAD_FROM).toBe(!readHere);
    const wanted = await expected(data);
    vi.mocked(readDataset).mockClear();
    const seen: Record<string, unknown> = await writer.create(newCity('Created')).then(
      ({ id }) => ({ created: id }),
      (error: CreateRefused) => ({ refused: error.status, detail: error.detail }),
    );
    await writer.idle();
    const calledHere = vi.mocked(readDataset).mock.calls.length > 0;
    // A file made invalid refuses close()'s fold too (it rejects): what is checked here is the POST's answer.
    await writer.close().catch(() => undefined);
    if ('created' in seen)
      seen.last = (await readDataset(data))
        .toCities()
        .map((c) => c.id)
        .slice(-2);
    else seen.logged = told.find((line) => line.startsWith('POST failed'));
    expect({ ...seen, readHere: calledHere }).toEqual({ ...wanted, readHere });
    await rm(data);
  });
});

describe("serve --writable opening: one read of the file's ids serves the fold and the writer, unless the file changed in between", () => {
  // What is in the log at open, and whether the file is changed (by someone else) once the fold has said its line,
  // or as its commit syncs its directory (the new file in place, its signature not taken yet).
  type Edit = 'after the fold' | 'as the commit syncs';
  it.each<[string, { log: 'none' | 'missing' | 'held'; edit?: Edit }, { reads: number; created: number }]>([
    ['nothing logged: read once (the writer learns its ids)', { log: 'none' }, { reads: 1, created: 3001 }],
    [
      "a logged city the file lacks: read once, by the fold; the writer takes its ids as the fold's commit left them",
      { log: 'missing' },
      { reads: 1, created: 100000 },
    ],
    [
      'a logged city the file holds (a server killed between its commit and the drop from its log): read once',
      { log: 'held' },
      { reads: 1, created: 100000 },
    ],
    [
      'the file changed by someone else after the fold: read again, its larger id seen (a change is never hidden)',
      { log: 'missing', edit: 'after the fold' },
      { reads: 2, created: 200001 },
    ],
    [
      "the file changed by someone else between the fold's commit and the signature taken after it: read again, its larger id seen",
      { log: 'missing', edit: 'as the commit syncs' },
      { reads: 2, created: 200001 },
    ],
  ])('%s', async (label, { log, edit: when }, expected) => {
    const data = join(root, `${label.replace(/\W+/g, '-').slice(0, 60)}.json`);
    const count = 3000;
    const loggedCity = makeCity(99999, { name: 'Logged' });
    await dataset(data, count, ...(log === 'held' ? [loggedCity] : []));
    expect((await stat(data)).size).toBeGreaterThanOrEqual(IDS_THREAD_FROM);
    if (log !== 'none') await CityLog.of(realpathSync(data)).append([loggedCity]);
    vi.mocked(fileIds).mockClear();
    const edit = () =>
      writeFileSync(
        data,
        JSON.stringify([...Array.from({ length: count }, (_, i) => makeCity(i + 1)), loggedCity, makeCity(200000)]),
      );
    commit.syncing = when === 'as the commit syncs' ? () => ((commit.syncing = undefined), edit()) : undefined;
    const writer = await LoggedCityWriter.open(data, {
      ...quietWriter,
      log: (line) => void (when === 'after the fold' && line.includes('folded in') && edit()),
    });
    const reads = vi.mocked(fileIds).mock.calls.length;
    const { id } = await writer.create(newCity('Created'));
    await writer.close();
    expect({ reads, created: id }).toEqual(expected);
    await rm(data);
  });
});

describe("serve --writable's catch-up: the file changed by someone else between its commit and the signature taken after it", () => {
  it.each<[string, { edit: boolean }, { next: number; reads: number }]>([
    ['unchanged: the next city gets the next id, the file not read again', { edit: false }, { next: 3002, reads: 0 }],
    [
      'a larger id added as the commit syncs its directory: read again, the next city gets the id past it',
      { edit: true },
      { next: 200001, reads: 1 },
    ],
  ])('%s', async (label, { edit }, expected) => {
    const data = join(root, `${label.replace(/\W+/g, '-').slice(0, 60)}.json`);
    await dataset(data, 3000);
    const writer = await LoggedCityWriter.open(data, quietWriter);
    // The committed file, with one more city: as an editor saves it (a new file renamed over it).
    const added = () => {
      const cities = JSON.parse(readFileSync(data, 'utf8'));
      writeFileSync(`${data}.saved`, JSON.stringify([...cities, makeCity(200000)]));
      renameSync(`${data}.saved`, data);
    };
    commit.syncing = edit ? () => ((commit.syncing = undefined), added()) : undefined;
    expect((await writer.create(newCity('First'))).id).toBe(3001);
    await writer.idle();
    vi.mocked(fileIds).mockClear();
    const { id } = await writer.create(newCity('Second'));
    const reads = vi.mocked(fileIds).mock.calls.length;
    await writer.close();
    // Every id once in the file: 3000, First, Second, and the one added.
    const ids = (await readDataset(data)).ids;
    expect({ next: id, reads, unique: new Set(ids).size === ids.length }).toEqual({ ...expected, unique: true });
    await rm(data);
  });
});
