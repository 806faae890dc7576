import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SiteBuilder } from '../src/app/site-builder.js';
import type { NewCity } from '../src/post/create-city.js';
import { DEV_FULL, matches } from './dev-full.js';
import { makeCity, tempDir } from './helpers.js';

// A full disk (a path listed in `full`: its writes fail with ENOSPC, no path) and a file system
// that refuses a path listed in `refused` (EACCES, EROFS): dev-full.ts.
const { full, refused } = vi.hoisted(() => ({
  full: new Set<string>(),
  refused: new Map<string, 'EACCES' | 'EROFS'>(),
}));
vi.mock('node:fs', async (original) => (await import('./dev-full.js')).faultyFs(await original(), { full, refused }));
vi.mock('node:fs/promises', async (original) =>
  (await import('./dev-full.js')).faultyFsPromises(await original(), { full, refused }),
);
// Unit files share their worker's modules (isolate: false): those another file loaded before this
// one hold the real node:fs, and the imports below would get them, writing to the real disk.
vi.resetModules();
const { openWritable } = await import('../src/app/writable.js');
const { CityLog } = await import('../src/dataset/city-log.js');
const { BEHIND_PATH } = await import('../src/site/behind.js');
const { stageAppend } = await import('../src/dataset/append-cities.js');
const { writeOwnedFiles } = await import('../src/fs/owned-files.js');
const { StatRecords } = await import('../src/store/stat-records.js');
const { siteSiblings } = await import('../src/fs/lock.js');
const { runMain } = await import('../src/cli/main.js');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-full-disk-')));
afterAll(() => cleanup());

/** Where a case works: a JSON dataset of one city (its real path) and a site directory, each case its own. */
interface Place {
  readonly data: string;
  readonly site: string;
  readonly log: string;
  readonly told: string[];
}

const NEW_CITY: NewCity = (({ id: _, created_at: __, updated_at: ___, ...rest }) => rest)(makeCity(0, { name: 'New' }));

let n = 0;
async function place(): Promise<Place> {
  const dir = join(await realpath(root), String(++n));
  await mkdir(dir);
  const data = join(dir, 'cities.json');
  await writeFile(data, `[\n  ${JSON.stringify(makeCity(1))}\n]\n`);
  const site = join(dir, 'site');
  await mkdir(dirname(join(site, BEHIND_PATH)), { recursive: true });
  return { data, site, log: CityLog.of(data).path, told: [] };
}

/** serve --writable's writer on the place's dataset and site, nothing built. */
function writable({ data, site, told }: Place) {
  const builder = { publish: async () => {} } as unknown as SiteBuilder;
  return openWritable({ data, dir: site, builder, answer: async () => {}, lockWait: 1000, log: (l) => told.push(l) });
}

/** The place's write-ahead log holding two cities; `first`, the bytes the first one takes. */
async function twoLogged(at: Place) {
  const log = new CityLog(at.log);
  await log.append([makeCity(2), makeCity(3)]);
  return { log, first: (await readFile(at.log, 'utf8')).indexOf('\n') + 1 };
}

/** How a write to a path fails: the disk full, or the path refused. */
type Failure = 'ENOSPC' | 'EACCES' | 'EROFS';
function failing(path: string, failure: Failure): void {
  if (failure === 'ENOSPC') full.add(path);
  else refused.set(path, failure);
}
function failingNoMore(): void {
  full.clear();
  refused.clear();
}

/** A POST whose writes to `paths` fail (the disk full by default): refused with a plain 500; what the server logged of it. */
async function refusedPost(at: Place, paths: string[], failure: Failure = 'ENOSPC'): Promise<string | undefined> {
  const { writer } = await writable(at);
  for (const path of paths) failing(path, failure);
  try {
    await expect(writer.create(NEW_CITY)).rejects.toMatchObject({ status: 500, message: 'A server error occurred.' });
  } finally {
    failingNoMore();
  }
  await writer.close();
  return at.told.find((line) => line.startsWith('POST failed'));
}

const space = (what: string) => `no space left for the ${what}: free some space and try again (ENOSPC)`;
/** The dataset's lock file; taking it writes a draft, `LOCK-PID`, linked into place. */
const lockOf = (at: Place) => join(dirname(at.data), `.${basename(at.data)}.lock`);
const draftOf = (at: Place) => `${lockOf(at)}-${process.pid}`;
const markerOf = (at: Place) => join(at.site, BEHIND_PATH);

// Each said Node's message alone, `ENOSPC: no space left on device, write`: no file, nothing to do.
describe('a write that finds the disk full (ENOSPC, no path in the error) names the file and what to do', () => {
  it.each<[string, (at: Place) => Promise<string | undefined>, (at: Place) => string]>([
    [
      "a POST's city written to the write-ahead log",
      (at) => refusedPost(at, [at.log]),
      (at) => `POST failed (500): ${space(`dataset ${at.data}`)}`,
    ],
    [
      "a POST taking the dataset's lock (its draft written)",
      (at) => refusedPost(at, [draftOf(at)]),
      (at) => `POST failed (500): ${space(`dataset ${at.data}`)}`,
    ],
    [
      'a POST marking the site behind',
      (at) => refusedPost(at, [markerOf(at)]),
      (at) => `POST failed (500): ${space(`site's behind marker ${markerOf(at)}`)}`,
    ],
    [
      'the background fold writing the new dataset beside the old',
      async (at) => {
        const { writer } = await writable(at);
        full.add(join(dirname(at.data), `.${basename(at.data)}.tmp-${process.pid}.*.json`));
        await writer.create(NEW_CITY);
        await writer.idle();
        full.clear();
        await writer.close();
        return at.told.find((line) => line.includes('the site is behind'));
      },
      (at) => `error: the site is behind the data (retrying in 1 s): ${space(`dataset ${at.data}`)}`,
    ],
    [
      'the log rewritten without its folded records',
      async (at) => {
        const { log, first } = await twoLogged(at);
        full.add(`${at.log}.tmp-${process.pid}.*`);
        return log.dropFirst(first).then(
          () => 'dropped',
          (error: Error) => error.message,
        );
      },
      (at) => space(`dataset ${at.data}`),
    ],
  ])('%s', async (_, act, said) => {
    const at = await place();
    try {
      expect(await act(at)).toBe(said(at));
    } finally {
      full.clear();
    }
  });
});

// Each said Node's message alone (`POST failed (500): EACCES: permission denied, open '...'`): nothing to do.
describe('a lock draft or behind marker the file system refuses (EACCES, EROFS) is said with the file and what to do', () => {
  const readOnly = '; choose a writable place (EROFS)';
  it.each<[string, (at: Place) => Promise<string | undefined>, (at: Place) => string]>([
    [
      "a POST taking the dataset's lock, its directory not writable",
      (at) => refusedPost(at, [draftOf(at)], 'EACCES'),
      (at) =>
        `POST failed (500): permission denied: cannot write in ${dirname(at.data)} (for the dataset ${at.data}); make that directory writable for this user (EACCES)`,
    ],
    [
      "a POST taking the dataset's lock, on a read-only file system",
      (at) => refusedPost(at, [draftOf(at)], 'EROFS'),
      (at) =>
        `POST failed (500): cannot write ${draftOf(at)} (of the dataset ${at.data}): it is on a read-only file system${readOnly}`,
    ],
    [
      'a POST marking the site behind, its directory not writable',
      (at) => refusedPost(at, [markerOf(at)], 'EACCES'),
      (at) =>
        `POST failed (500): permission denied: cannot write in ${dirname(markerOf(at))} (for the site's behind marker ${markerOf(at)}); make that directory writable for this user (EACCES)`,
    ],
    [
      'a POST marking the site behind, on a read-only file system',
      (at) => refusedPost(at, [markerOf(at)], 'EROFS'),
      (at) =>
        `POST failed (500): cannot write the site's behind marker ${markerOf(at)}: it is on a read-only file system${readOnly}`,
    ],
  ])('%s', async (_, act, said) => {
    const at = await place();
    try {
      expect(await act(at)).toBe(said(at));
    } finally {
      failingNoMore();
    }
  });
});

/** A file replaced through a temporary one beside it: `act` writes the temporary file, then renames it over `file`. */
interface Rewrite {
  readonly file: string;
  /** The temporary file's path, or a pattern of it (a draft's token: dev-full.ts's matches). */
  readonly temp: string;
  readonly act: () => Promise<unknown>;
}

// The write-ahead log's copy was left half-written: on a full disk, it held the space it took until the next fold.
describe('a file rewritten through a temporary one, on a full disk: the temporary file removed, the file as it was', () => {
  it.each<[string, (at: Place) => Promise<Rewrite>]>([
    [
      'the write-ahead log without its folded records',
      async (at) => {
        const { log, first } = await twoLogged(at);
        return { file: at.log, temp: `${at.log}.tmp-${process.pid}.*`, act: () => log.dropFirst(first) };
      },
    ],
    [
      "the dataset's new version (a fold)",
      async (at) => ({
        file: at.data,
        temp: join(dirname(at.data), `.${basename(at.data)}.tmp-${process.pid}.*.json`),
        act: () => stageAppend(at.data, [makeCity(2)]),
      }),
    ],
    [
      "an edge project's file",
      async (at) => {
        const file = join(dirname(at.data), 'worker.js');
        const write = (text: string) =>
          writeOwnedFiles(dirname(file), '.owned.json', 'test', [{ path: file, bytes: Buffer.from(text) }]);
        await write('// first\n');
        return {
          file,
          temp: join(dirname(file), `.worker.js.${process.pid}.*.draft`),
          act: () => write('// second\n'),
        };
      },
    ],
    [
      "the site's stat cache",
      async (at) => {
        const write = async () => new StatRecords().write(at.site, new Uint32Array(0), await stat(at.data));
        await write();
        const { statCache } = siteSiblings(at.site);
        return { file: statCache, temp: `${statCache}-${process.pid}.*`, act: write };
      },
    ],
  ])('%s', async (_, prepare) => {
    const at = await place();
    const { file, temp, act } = await prepare(at);
    const before = await readFile(file);
    full.add(temp);
    try {
      await expect(act()).rejects.toThrow(/ENOSPC/);
    } finally {
      full.clear();
    }
    expect((await readdir(dirname(temp))).filter((name) => matches(temp, join(dirname(temp), name)))).toEqual([]);
    expect(await readFile(file)).toEqual(before);
  });
});

// It said `no space left for the path <the working directory>`: a path made up.
describe('an error that names no file, which no step named (the output written to /dev/full)', () => {
  it('is said with its system call and what to do, one line, exit 1', async () => {
    const fd = openSync(DEV_FULL, 'w');
    let stderr = '';
    try {
      const code = await runMain({
        rawArgs: ['--version'],
        stdout: Object.assign(new Writable(), { write: (text: string) => writeSync(fd, text) > 0 }),
        stderr: Object.assign(new Writable(), { write: (text: string) => (stderr += text).length > 0 }),
      });
      expect(code).toBe(1);
    } finally {
      closeSync(fd);
    }
    expect(stderr).toBe(
      'cities-api: write() failed: no space left on device (the system named no file); free some space and try again (ENOSPC)\n',
    );
  });
});
