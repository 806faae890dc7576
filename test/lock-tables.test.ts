import { execFile } from 'node:child_process';
import { copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteSiblings } from '../src/fs/lock.js';
import { KIT, tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';

// Holders in one process that know nothing of each other. The threads of a process find its one
// table of holders (lock-tokens.ts) through the environment data of the thread that started them; a
// thread started by one that had not loaded cities-api makes a table of its own. So
// a library user whose main thread never imports cities-api, and who starts workers that each
// import it, has one table per worker: another worker's lock or draft, with this pid, is in none
// of this worker's. Each was once taken for a dead process's whose pid this one reuses: the lock
// taken over (two builds of one site at once), the draft removed while it was written.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-lock-tables-')));
afterAll(() => cleanup());

// The process: its main thread starts both workers first and never loads lib/; each worker imports
// lib/ and does what it is told, one step at a time. It prints each step's answer.
const PROCESS = `
  import { Worker } from 'node:worker_threads';
  const { lib, steps, source } = JSON.parse(process.argv.at(-1));
  const started = () => new Worker(source, { eval: true, execArgv: [], workerData: { lib } });
  const workers = { a: started(), b: started() };
  const answer = (worker) => new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
  const ready = await Promise.all(Object.values(workers).map(answer));
  const answers = [];
  for (const [who, step] of steps) {
    if (step === 'end') { await workers[who].terminate(); answers.push([who, 'ended']); continue; }
    const next = answer(workers[who]);
    workers[who].postMessage(step);
    answers.push([who, await next]);
  }
  await Promise.all(Object.values(workers).map((worker) => worker.terminate()));
  console.log(JSON.stringify({ ready, answers }));`;

const WORKER = `
  const { parentPort, workerData: { lib } } = require('node:worker_threads');
  const said = (error) => error.constructor.name + ': ' + error.message;
  Promise.all(['fs/lock.js', 'fs/through-draft.js', 'fs/dead-drafts.js', 'fs/file-output.js', 'index.js'].map((m) => import(lib + '/' + m)))
    .then(([locks, { replaceThrough }, { draftName, removeDeadDrafts }, { writeNew }, { build }]) => {
      let release, placed;
      const steps = {
        lock: async ({ kind, path }) => ((release = await locks[kind](path)), 'held'),
        release: async () => (await release(), 'released'),
        draft: ({ before, tail, path }) => new Promise((written) => {
          placed = replaceThrough(draftName(before, tail), path, async (draft) => {
            await writeNew(draft, 'from a');
            await new Promise((go) => { parentPort.once('message', go); written({ draft }); });
          }).then(() => 'placed', said);
        }),
        place: () => placed,
        sweep: async ({ before, tail }) => (await removeDeadDrafts([draftName(before, tail)]), 'swept'),
        build: async ({ data, out }) => (await build({ data, out, lockWait: 0 }), 'built'),
      };
      parentPort.on('message', (step) => {
        steps[step.op](step).then((answer) => parentPort.postMessage(answer), (error) => parentPort.postMessage(said(error)));
      });
      parentPort.postMessage('ready');
    });`;

type Step = readonly ['a' | 'b', { op: string; [key: string]: unknown } | 'end'];

/**
 * Runs `steps` in a new process of two such workers: each step's answer. `before`: a shell command
 * run first by the process, in its shell, which then becomes node (exec: the same pid, `$$`).
 */
async function inTwoWorkers(steps: readonly Step[], before = ':'): Promise<unknown[]> {
  const lib = pathToFileURL(join(ROOT, 'lib')).href;
  const node = [process.execPath, '--input-type=module', '-e', PROCESS, JSON.stringify({ lib, steps, source: WORKER })];
  const { stdout } = await promisify(execFile)('sh', ['-c', `${before} && exec "$@"`, 'sh', ...node], {
    timeout: 60_000,
  });
  const { ready, answers } = JSON.parse(stdout) as { ready: string[]; answers: [string, unknown][] };
  expect(ready).toEqual(['ready', 'ready']);
  return answers.map(([, answer]) => answer);
}

let n = 0;
/** A new folder holding a dataset: its path, the dataset's and the site's. */
async function folder() {
  const dir = join(root, String(++n));
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  await copyFile(join(KIT, 'cities11.csv'), data);
  return { dir, data, site: join(dir, 'site') };
}

const exists = (path: string) => lstat(path).then(Boolean, () => false);
const busy = expect.stringMatching(/^LockBusyError: /);

describe('a lock held by a worker with a table of its own, with this pid', () => {
  it.each([
    ['lockSite', (place: { site: string }) => place.site],
    ['lockDataset', (place: { data: string }) => place.data],
  ])('%s held by one worker: refused in the other while held, taken once released', async (kind, path) => {
    const place = await folder();
    const lock = { kind, path: path(place) };
    expect(
      await inTwoWorkers([
        ['a', { op: 'lock', ...lock }],
        ['b', { op: 'lock', ...lock }],
        ['a', { op: 'release' }],
        ['b', { op: 'lock', ...lock }],
        ['b', { op: 'release' }],
      ]),
    ).toEqual(['held', busy, 'released', 'held', 'released']);
  });

  it("the site's lock held by one worker: the other's build() of that site is refused (not two builds at once)", async () => {
    const { data, site } = await folder();
    const answers = await inTwoWorkers([
      ['a', { op: 'lock', kind: 'lockSite', path: site }],
      ['b', { op: 'build', data, out: site }],
      ['a', { op: 'release' }],
      ['b', { op: 'build', data, out: site }],
    ]);
    expect(answers).toEqual(['held', expect.stringMatching(/^LockBusyError: another build of /), 'released', 'built']);
  });

  it("held by a worker that ended (terminated): refused all the same, this process cannot tell it from a live one's (the next process takes it)", async () => {
    const { site } = await folder();
    const lock = { kind: 'lockSite', path: site };
    expect(
      await inTwoWorkers([
        ['a', { op: 'lock', ...lock }],
        ['a', 'end'],
        ['b', { op: 'lock', ...lock }],
      ]),
    ).toEqual(['held', 'ended', busy]);
    expect(await exists(siteSiblings(site).lock)).toBe(true);
  });
});

describe('a draft written by a worker with a table of its own, with this pid', () => {
  it("kept by the other's removal of dead writers' drafts, and placed by its writer", async () => {
    const { dir } = await folder();
    const target = { before: join(dir, '.notes.txt.'), tail: '.draft', path: join(dir, 'notes.txt') };
    const [written, swept, placed] = await inTwoWorkers([
      ['a', { op: 'draft', ...target }],
      ['b', { op: 'sweep', ...target }],
      ['a', { op: 'place' }],
    ]);
    expect(written).toMatchObject({ draft: expect.stringContaining('.notes.txt.') });
    expect([swept, placed]).toEqual(['swept', 'placed']);
    expect(await exists(target.path)).toBe(true);
  });
});

describe('a lock and drafts a dead process with this pid left (written before this process started)', () => {
  it("the lock taken over, the drafts (an older version's name, and another table's) removed", async () => {
    const { dir, site } = await folder();
    const lock = siteSiblings(site).lock;
    // Written by the shell whose pid node then has, dated a minute back: before node started, by the clock.
    const files = [lock, join(dir, '.notes.txt.$$.draft'), join(dir, '.notes.txt.$$.0.1.draft')].map((f) => `"${f}"`);
    const before = `echo $$ > ${files[0]} && touch ${files.join(' ')} && touch -d "@$(($(date +%s) - 60))" ${files.join(' ')}`;
    const target = { before: join(dir, '.notes.txt.'), tail: '.draft' };
    expect(
      await inTwoWorkers(
        [
          ['a', { op: 'lock', kind: 'lockSite', path: site }],
          ['b', { op: 'sweep', ...target }],
          ['a', { op: 'release' }],
        ],
        before,
      ),
    ).toEqual(['held', 'swept', 'released']);
    expect(await exists(lock)).toBe(false);
    expect((await readdir(dir)).filter((name) => name.startsWith('.notes.txt.'))).toEqual([]);
  });
});
