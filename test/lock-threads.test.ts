import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDataset, lockSite, type Release, siteSiblings } from '../src/fs/lock.js';
import { tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';

// Holders of one lock in one process: threads share its pid (a library user's serve({ writable })
// taking the dataset's lock for its POSTs in one thread, a large build() taking it for its swap in
// a thread of its own). A holder in another thread is a live holder, never a dead process's lock
// whose pid this process reuses; a thread that died holding it is one, its lock taken over.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-lock-threads-')));
afterAll(() => cleanup());

type Kind = 'lockDataset' | 'lockSite';
const LOCKS = { lockDataset, lockSite };
/** The lock file of what `kind` locks at `path`. */
const lockFile = (kind: Kind, path: string) =>
  kind === 'lockSite' ? siteSiblings(path).lock : join(root, `.${path.split('/').at(-1)}.lock`);

/** A holder: takes the lock ('held', or what refused it), releases it. */
interface Holder {
  take(): Promise<string>;
  release(): Promise<void>;
  end(): Promise<void>;
}

function inThisThread(kind: Kind, path: string): Holder {
  let release: Release | undefined;
  return {
    take: () =>
      LOCKS[kind](path).then(
        (r) => ((release = r), 'held'),
        (error: Error) => `${error.constructor.name}: ${error.message}`,
      ),
    release: () => release!(),
    end: async () => {},
  };
}

// The compiled lock module (lib/), as a build's thread runs it.
const THREAD = `
  const { parentPort, workerData } = require('node:worker_threads');
  import(workerData.module).then((locks) => {
    let release;
    parentPort.on('message', async (what) => {
      if (what === 'release') return void (await release(), parentPort.postMessage('released'));
      try {
        release = await locks[workerData.kind](workerData.path);
        parentPort.postMessage('held');
      } catch (error) {
        parentPort.postMessage(error.constructor.name + ': ' + error.message);
      }
    });
    parentPort.postMessage('ready');
  });`;

async function inAnotherThread(kind: Kind, path: string): Promise<Holder & { worker: Worker }> {
  const module = pathToFileURL(join(ROOT, 'lib/fs/lock.js')).href;
  const worker = new Worker(THREAD, { eval: true, workerData: { module, kind, path } });
  const next = () => new Promise<string>((resolve) => worker.once('message', resolve));
  expect(await next()).toBe('ready');
  const ask = (what: string) => {
    const answer = next();
    worker.postMessage(what);
    return answer;
  };
  return {
    worker,
    take: () => ask('take'),
    release: async () => void (await ask('release')),
    end: async () => void (await worker.terminate()),
  };
}

const where = { 'this thread': inThisThread, 'another thread': inAnotherThread };
type Where = keyof typeof where;
const CASES: [Kind, Where, Where][] = [
  ['lockDataset', 'another thread', 'this thread'],
  ['lockDataset', 'this thread', 'another thread'],
  ['lockSite', 'another thread', 'this thread'],
  ['lockSite', 'this thread', 'another thread'],
];
let n = 0;
/** A new dataset file, or a site directory's path, for `kind`. */
async function target(kind: Kind): Promise<string> {
  const path = join(root, `${kind}-${++n}`);
  if (kind === 'lockDataset') await writeFile(path, '[]\n');
  else await mkdir(path);
  return path;
}

describe('two holders of one lock in one process, in two threads', () => {
  it.each(CASES)('%s held in %s: refused in %s while held, taken once released', async (kind, first, second) => {
    const path = await target(kind);
    const holder = await where[first](kind, path);
    const other = await where[second](kind, path);
    try {
      expect(await holder.take()).toBe('held');
      expect(await other.take()).toMatch(new RegExp(`^LockBusyError: .*pid ${process.pid}`));
      // The refused one removed nothing: the holder's lock is still there, and still its own to release.
      expect(existsSync(lockFile(kind, path))).toBe(true);
      await holder.release();
      expect(existsSync(lockFile(kind, path))).toBe(false);
      expect(await other.take()).toBe('held');
      await other.release();
      expect(existsSync(lockFile(kind, path))).toBe(false);
    } finally {
      await Promise.all([holder.end(), other.end()]);
    }
  });

  it.each<Kind>(['lockDataset', 'lockSite'])(
    '%s held by a thread that died (terminated): taken over by this thread',
    async (kind) => {
      const path = await target(kind);
      const holder = await inAnotherThread(kind, path);
      expect(await holder.take()).toBe('held');
      await holder.end();
      expect(existsSync(lockFile(kind, path))).toBe(true);
      const here = inThisThread(kind, path);
      expect(await here.take()).toBe('held');
      await here.release();
      expect(existsSync(lockFile(kind, path))).toBe(false);
    },
  );
});
