import { readdirSync } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendCities } from '../src/dataset/append-cities.js';
import { CityLog } from '../src/dataset/city-log.js';
import { threadId } from 'node:worker_threads';
import { dropToken, forgetThread, newToken } from '../src/fs/lock-tokens.js';
import { createAtomically, writeOwnedFiles } from '../src/fs/owned-files.js';
import { StatRecords } from '../src/store/stat-records.js';
import { KIT, makeCity, tempDir } from './helpers.js';

// A file is written whole through a draft named with its writer's pid and token, then renamed or
// linked into place. A writer killed in between (SIGKILL, a power loss) left its draft, and no later
// run removed it: the next writer of the same file (or opener of the same dataset or site) now
// removes the drafts of dead writers, and nothing else. The names are spelt out here, as a user
// finds them. (Another thread's draft, being written: draft-threads.test.ts.)

/** No process has it: Linux's pids stay below pid_max, at most 2^22; other systems' below 100,000. */
const DEAD = 2 ** 22;
/** A thread of this process: its id names no process (a dead writer's pid reused as a thread's). */
const THREAD =
  process.platform === 'linux'
    ? readdirSync('/proc/self/task')
        .map(Number)
        .find((id) => id !== process.pid)
    : undefined;
/** A live process other than this one: the run that started this test's worker. */
const LIVE = process.ppid;
/** A token no process gives (their tags are 1 to 2^31 - 1 in base 36): another process's, that had this pid. */
const NOT_OURS = '0.1';

interface Kind {
  /** Each draft kind, by who writes it. */
  readonly what: string;
  /** Its name for a writer: its pid, and a dot and its token but in an older version's names (a date, to make a look-alike). */
  readonly draft: (writer: number | string) => string;
  /** Names a user may give files there that only look like it. */
  readonly lookAlikes: readonly string[];
  /** The run that writes the same file or opens the same dataset or site, in `dir`. */
  readonly run: (dir: string) => Promise<unknown>;
}

const B = new TextEncoder().encode('export default {};\n');
const dataset = (dir: string) => join(dir, 'cities.csv');
const site = (dir: string) => join(dir, 'site');
const other = ['.notes.4194304.draft', '.other.csv.tmp-4194304.csv', '.www.lock-4194304'];

const KINDS: Kind[] = [
  {
    what: "an edge project's file of its own (writeOwnedFiles)",
    draft: (pid) => `.cities-site.js.${pid}.draft`,
    lookAlikes: [
      '.cities-site.js.20240101.draft',
      '.cities-site.js.0123.draft',
      '.cities-site.js.draft',
      '.cities-site.js.4194304.ab.draft',
      '.cities-site.js.4194304.AB.1.draft',
    ],
    run: (dir) => writeOwnedFiles(dir, '.record.json', 'test', [{ path: join(dir, 'cities-site.js'), bytes: B }]),
  },
  {
    what: "an edge project's record of its files (writeOwnedFiles)",
    draft: (pid) => `..record.json.${pid}.draft`, // the record's name starts with a dot too
    lookAlikes: ['..record.json.4194304.draft.orig', '.record.json.4194304.draft', '..record.json.12x.draft'],
    run: (dir) => writeOwnedFiles(dir, '.record.json', 'test', [{ path: join(dir, 'cities-site.js'), bytes: B }]),
  },
  {
    what: "an edge project's user file, created when missing (createAtomically)",
    draft: (pid) => `.wrangler.jsonc.${pid}.draft`,
    lookAlikes: [
      '.wrangler.jsonc.20240101.draft',
      '.wrangler.jsonc.1.draft.txt',
      '.wrangler.jsonc.4194304.abcdefg.1.draft',
    ],
    run: (dir) => createAtomically(join(dir, 'wrangler.jsonc'), '{}\n'),
  },
  {
    what: "the write-ahead log's rewrite (CityLog.dropFirst)",
    draft: (pid) => `.cities.csv.wal.tmp-${pid}`,
    lookAlikes: ['.cities.csv.wal.tmp-20240101', '.cities.csv.wal.tmp-1.csv', '.cities.csv.wal.tmp-4194304.x.1.bak'],
    run: async (dir) => {
      const log = CityLog.of(dataset(dir));
      await log.append([makeCity(101)]);
      const { bytes } = await log.read();
      await log.append([makeCity(102)]);
      await log.dropFirst(bytes);
    },
  },
  {
    what: "a dataset's new version, staged beside it (stageAppend; an older version's names had no token)",
    draft: (pid) => `.cities.csv.tmp-${pid}.csv`,
    lookAlikes: [
      '.cities.csv.tmp-20240101.csv',
      '.cities.csv.tmp-0123.csv',
      '.cities.csv.tmp-old.csv',
      '.cities.csv.tmp-4194304.csv.orig',
      '.cities.csv.tmp-4194304.x.1.2.csv',
      '.cities.csv.tmp-4194304.AB.1.csv',
    ],
    run: (dir) => appendCities(dataset(dir), [makeCity(101)]),
  },
  {
    what: "a dataset's previous version on its way to FILE.bak (commitStaged)",
    draft: (pid) => `.cities.csv.bak-${pid}`,
    lookAlikes: ['.cities.csv.bak-20240101', '.cities.csv.bak-old', '.cities.csv.bak-4194304.x.01'],
    run: (dir) => appendCities(dataset(dir), [makeCity(101)]),
  },
  {
    what: "the site's stat cache (StatRecords.write)",
    draft: (pid) => `.site.stat-cache-${pid}`,
    lookAlikes: [
      '.site.stat-cache-20240101',
      '.site.stat-cache-old',
      '.site.stat-cache-4194304.x.01',
      '.site.stat-cache-4194304..1',
    ],
    run: (dir) => new StatRecords().write(site(dir), new Uint32Array(0), { ino: 1, size: 0, mtimeMs: 0, ctimeMs: 0 }),
  },
];
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-dead-drafts-')));
afterAll(() => cleanup());

let n = 0;
/** A folder holding a dataset and a site, as a project's or a server's. */
async function folder(): Promise<string> {
  const dir = join(root, String(n++));
  await mkdir(site(dir), { recursive: true });
  await copyFile(join(KIT, 'cities11.csv'), dataset(dir));
  return dir;
}

/** Long before this process started. */
const BEFORE = new Date(Date.now() - process.uptime() * 1000 - 3_600_000);

/** A draft as its writer leaves it; written at `time` (by default now). */
async function plant(path: string, time?: Date): Promise<void> {
  await writeFile(path, 'half written');
  if (time) await utimes(path, time, time);
}

/** The check of a draft that is kept, then removed (it has this pid: the run must leave none). */
const keptThenRemoved = (path: string) => async () => {
  expect(await readFile(path, 'utf8')).toBe('half written');
  await rm(path);
};

const exists = (path: string) => lstat(path).then(Boolean, () => false);

type Case = [string, (kind: Kind, dir: string) => Promise<() => Promise<void>>];

const CASES: Case[] = [
  [
    "a dead writer's draft (no process has its pid) is removed",
    async (kind, dir) => {
      await plant(join(dir, kind.draft(DEAD)));
      return async () => expect(await exists(join(dir, kind.draft(DEAD)))).toBe(false);
    },
  ],
  [
    "a dead writer's draft named with its token (no process has its pid) is removed",
    async (kind, dir) => {
      const path = join(dir, kind.draft(`${DEAD}.${NOT_OURS}`));
      await plant(path);
      return async () => expect(await exists(path)).toBe(false);
    },
  ],
  [
    "a dead process's draft that had this pid, named without a token (an older version's), written before this process started, is removed",
    async (kind, dir) => {
      const path = join(dir, kind.draft(process.pid));
      await plant(path, BEFORE);
      return async () => expect(await exists(path)).toBe(false);
    },
  ],
  [
    "a dead process's draft that had this pid, named with its token (not this process's), written before this process started, is removed",
    async (kind, dir) => {
      const path = join(dir, kind.draft(`${process.pid}.${NOT_OURS}`));
      await plant(path, BEFORE);
      return async () => expect(await exists(path)).toBe(false);
    },
  ],
  [
    "a draft of this pid named with a token this process's table does not know, written since it started (a writer here with a table of its own), is kept",
    async (kind, dir) => {
      const path = join(dir, kind.draft(`${process.pid}.${NOT_OURS}`));
      await plant(path);
      return keptThenRemoved(path);
    },
  ],
  [
    "a draft of this pid named without a token, written since this process started (it cannot be a dead process's), is kept",
    async (kind, dir) => {
      const path = join(dir, kind.draft(process.pid));
      await plant(path);
      return keptThenRemoved(path);
    },
  ],
  [
    "this process's draft whose writer's thread ended writing it (forgetThread) is removed",
    async (kind, dir) => {
      const token = newToken();
      forgetThread(threadId);
      const path = join(dir, kind.draft(`${process.pid}.${token}`));
      await plant(path);
      return async () => {
        expect(await exists(path)).toBe(false);
        dropToken(token);
      };
    },
  ],
  [
    "this process's draft whose writer is done with it (its token dropped, the draft left) is removed",
    async (kind, dir) => {
      const token = newToken();
      dropToken(token);
      const path = join(dir, kind.draft(`${process.pid}.${token}`));
      await plant(path);
      return async () => expect(await exists(path)).toBe(false);
    },
  ],
  [
    "this process's draft whose writer still has it (its token held, in a thread still running) is kept",
    async (kind, dir) => {
      const token = newToken();
      const path = join(dir, kind.draft(`${process.pid}.${token}`));
      await plant(path);
      return async () => {
        expect(await readFile(path, 'utf8')).toBe('half written');
        dropToken(token);
        await rm(path);
      };
    },
  ],
  [
    "a dead writer's draft whose pid is a thread's now (Linux) is removed",
    async (kind, dir) => {
      const path = join(dir, kind.draft(THREAD ?? DEAD));
      await plant(path);
      return async () => expect(await exists(path)).toBe(false);
    },
  ],
  [
    "a live process's draft (a concurrent run, of an older version) is kept",
    async (kind, dir) => {
      const path = join(dir, kind.draft(LIVE));
      await plant(path);
      return async () => expect(await readFile(path, 'utf8')).toBe('half written');
    },
  ],
  [
    "a live process's draft named with its token (a concurrent run) is kept",
    async (kind, dir) => {
      const path = join(dir, kind.draft(`${LIVE}.${NOT_OURS}`));
      await plant(path);
      return async () => expect(await readFile(path, 'utf8')).toBe('half written');
    },
  ],
  [
    "a user's files named alike, not a name the writer gives there, are kept",
    async (kind, dir) => {
      const names = [...kind.lookAlikes, ...other];
      for (const name of names) await writeFile(join(dir, name), 'mine');
      return async () => {
        for (const name of names) expect(await readFile(join(dir, name), 'utf8'), name).toBe('mine');
      };
    },
  ],
  [
    "a directory named as a dead writer's draft of a file (someone's, holding their file) is kept",
    async (kind, dir) => {
      const path = join(dir, kind.draft(`${DEAD}.${NOT_OURS}`));
      await mkdir(path);
      await writeFile(join(path, 'mine.txt'), 'mine');
      return async () => expect(await readFile(join(path, 'mine.txt'), 'utf8')).toBe('mine');
    },
  ],
  [
    "a dead writer's draft name that is a link: never followed (the link alone goes)",
    async (kind, dir) => {
      const victim = join(dir, 'victim');
      await plant(victim);
      await symlink(victim, join(dir, kind.draft(DEAD)));
      return async () => {
        expect(await readFile(victim, 'utf8')).toBe('half written');
        expect(await exists(join(dir, kind.draft(DEAD)))).toBe(false);
      };
    },
  ],
];

describe.each(KINDS.map((kind) => [kind.what, kind] as const))('%s', (_, kind) => {
  it.each(CASES)('%s', async (_, arrange) => {
    const dir = await folder();
    const check = await arrange(kind, dir);
    await kind.run(dir);
    await check();
    // The run left nothing of its own: only what it writes, and what the case kept.
    const ours = new RegExp(`[.-]${process.pid}(?:[.]|$)`);
    expect((await readdir(dir)).filter((name) => ours.test(name))).toEqual([]);
  });
});
