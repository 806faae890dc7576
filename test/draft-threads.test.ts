import { copyFile, lstat, mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discardStaged, stageAppend } from '../src/dataset/append-cities.js';
import { CityLog } from '../src/dataset/city-log.js';
import { siteSiblings } from '../src/fs/lock.js';
import { removeDeadDraftsOf, writeOwnedFiles } from '../src/fs/owned-files.js';
import { StatRecords } from '../src/store/stat-records.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';

// The threads of one process share its pid (a server's build, write and ids workers; a library
// user's build() beside serve()). A draft another thread of this process is writing is in use:
// a writer of the same file in this thread, removing the drafts of dead writers first, once took
// it for a dead process's whose pid this one reuses and removed it, and the other thread's rename
// then failed (ENOENT). A thread that died before it placed its draft is a dead writer.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-draft-threads-')));
afterAll(() => cleanup());

/** A file written through drafts: where, and the drafts' name (draftName's `before` and `tail`). */
interface Target {
  readonly path: string;
  readonly before: string;
  readonly tail: string;
}

// The compiled modules (lib/), as a worker runs them: `path` replaced through a draft, the thread
// stopping between writing it and renaming it into place until told to go on.
const THREAD = `
  const { parentPort, workerData: { lib, path, before, tail } } = require('node:worker_threads');
  Promise.all([import(lib + '/fs/through-draft.js'), import(lib + '/fs/dead-drafts.js'), import(lib + '/fs/file-output.js')])
    .then(([{ replaceThrough }, { draftName }, { writeNew }]) =>
      replaceThrough(draftName(before, tail), path, async (draft) => {
        await writeNew(draft, 'from the thread');
        await new Promise((go) => { parentPort.once('message', go); parentPort.postMessage({ draft }); });
      }),
    )
    .then(() => parentPort.postMessage({ done: true }), (error) => parentPort.postMessage({ error: error.message }));`;

/** A thread writing `target`, stopped with its draft written: the draft's path, and what its write ends in. */
async function writingThread(target: Target) {
  const lib = pathToFileURL(join(ROOT, 'lib')).href;
  const worker = new Worker(THREAD, { eval: true, workerData: { lib, ...target } });
  const next = () =>
    new Promise<{ draft?: string; done?: true; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const { draft, error } = await next();
  expect(error).toBeUndefined();
  return {
    worker,
    draft: draft!,
    finish: async () => {
      const end = next();
      worker.postMessage('go');
      return { ...(await end), ended: await worker.terminate() };
    },
  };
}

const exists = (path: string) => lstat(path).then(Boolean, () => false);

let n = 0;
async function folder(): Promise<string> {
  const dir = join(root, String(++n));
  await mkdir(dir);
  return dir;
}

/** A log of two records, the first in the dataset: dropping it rewrites the log through a draft. */
async function twoLogged(dir: string) {
  const log = CityLog.of(join(dir, 'cities.csv'));
  await log.append([makeCity(1)]);
  const { bytes } = await log.read();
  await log.append([makeCity(2)]);
  return { log, first: bytes };
}

interface Kind {
  readonly what: string;
  readonly target: (dir: string) => Target;
  /** What this thread does meanwhile: writes the same file, or removes its dead writers' drafts. */
  readonly here: (dir: string) => Promise<unknown>;
}

const owned = (dir: string): Target => ({
  path: join(dir, 'worker.js'),
  before: join(dir, '.worker.js.'),
  tail: '.draft',
});
const log = (dir: string): Target => ({
  path: CityLog.of(join(dir, 'cities.csv')).path,
  before: `${CityLog.of(join(dir, 'cities.csv')).path}.tmp-`,
  tail: '',
});
const statCache = (dir: string): Target => ({
  path: siteSiblings(join(dir, 'site')).statCache,
  before: `${siteSiblings(join(dir, 'site')).statCache}-`,
  tail: '',
});

/** A dataset's staged new version: named as a stageAppend in that thread names it (`.NAME.tmp-PID.TOKEN.EXT`). */
const staged = (dir: string): Target => ({
  path: join(dir, 'cities.csv'),
  before: join(dir, '.cities.csv.tmp-'),
  tail: '.csv',
});

const KINDS: Kind[] = [
  {
    what: "a dataset's staged new version, staged here too (a second writer of it in this process: stageAppend)",
    target: staged,
    here: async (dir) => {
      await copyFile(join(KIT, 'cities11.csv'), staged(dir).path);
      await discardStaged(await stageAppend(staged(dir).path, [makeCity(101)]));
    },
  },
  {
    what: "an edge project's file, written here too (writeOwnedFiles)",
    target: owned,
    here: (dir) =>
      writeOwnedFiles(dir, '.record.json', 'test', [{ path: owned(dir).path, bytes: Buffer.from('here') }]),
  },
  {
    what: "an edge project's file, its dead writers' drafts removed here (removeDeadDraftsOf)",
    target: owned,
    here: (dir) => removeDeadDraftsOf([owned(dir).path]),
  },
  {
    what: 'the write-ahead log, rewritten here too (CityLog.dropFirst)',
    target: log,
    here: async (dir) => {
      const { log, first } = await twoLogged(dir);
      await log.dropFirst(first);
    },
  },
  {
    what: "the site's stat cache, written here too (StatRecords.write)",
    target: statCache,
    here: async (dir) => {
      await mkdir(join(dir, 'site'));
      await new StatRecords().write(join(dir, 'site'), new Uint32Array(0), { ino: 1, size: 0, mtimeMs: 0, ctimeMs: 0 });
    },
  },
];

type Case = [string, (kind: Kind, dir: string) => Promise<void>];

const CASES: Case[] = [
  [
    "another thread's, being written: kept, and that thread places it",
    async (kind, dir) => {
      const thread = await writingThread(kind.target(dir));
      try {
        await kind.here(dir);
        expect(await readFile(thread.draft, 'utf8')).toBe('from the thread');
        expect(await thread.finish()).toMatchObject({ done: true });
        expect(await exists(thread.draft)).toBe(false);
        expect(await readFile(kind.target(dir).path, 'utf8')).toBe('from the thread');
      } finally {
        await thread.worker.terminate();
      }
    },
  ],
  [
    "a thread's that ended (terminated) before it placed it: removed where the system tells a thread gone (Linux), else kept",
    async (kind, dir) => {
      const thread = await writingThread(kind.target(dir));
      await thread.worker.terminate();
      expect(await exists(thread.draft)).toBe(true);
      await kind.here(dir);
      expect(await exists(thread.draft)).toBe(process.platform !== 'linux');
    },
  ],
  [
    "a dead process's that had this pid (its name holds no writer's token), written before this process started: removed",
    async (kind, dir) => {
      const { before, tail } = kind.target(dir);
      const draft = `${before}${process.pid}${tail}`;
      await writeFile(draft, 'half written');
      const long = new Date(Date.now() - process.uptime() * 1000 - 3_600_000);
      await utimes(draft, long, long);
      await kind.here(dir);
      expect(await exists(draft)).toBe(false);
    },
  ],
];

describe.each(KINDS.map((kind) => [kind.what, kind] as const))('%s: a draft of this process', (_, kind) => {
  it.each(CASES)('%s', async (_, check) => check(kind, await folder()));
});
