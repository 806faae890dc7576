import { spawn } from 'node:child_process';
import { rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHere } from '../src/app/build.js';
import { LiveSite } from '../src/app/live-site.js';
import { serve } from '../src/app/serve.js';
import { siteSiblings } from '../src/fs/lock.js';
import { threadReader } from '../src/http/site-data-thread.js';
import { runningThreads } from '../src/proc/workers.js';
import { MANIFEST_PATH } from '../src/site/manifest.js';
import { KIT, tempDir } from './helpers.js';

// A server a library caller closes leaves no thread of ours running (#26 leftovers, item 1): the
// reading thread started as a build begins (site-data-thread.ts prepare), a read under way, the
// composing thread (compose-thread.ts); and a closed server starts none later.

let dir: string;
let cleanup: () => Promise<void>;
const site = () => join(dir, 'site');
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  await buildHere({ data: join(KIT, 'cities48.json'), out: site(), baseUrl: 'http://x.test', pageSizes: [10] });
}, 60_000);
afterAll(() => cleanup());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Another process's build of the site, as its lock says (a live process holds it), for as long as `during` runs. */
async function lockHeld<T>(during: () => Promise<T>): Promise<T> {
  const holder = spawn('sleep', ['600']);
  const { lock } = siteSiblings(site());
  await writeFile(lock, `${holder.pid}\n`);
  try {
    return await during();
  } finally {
    holder.kill();
    await rm(lock, { force: true });
  }
}
/** Waits until runningThreads() is `count` (a thread's start and end are asynchronous), at most 5 s; returns it then. */
async function threadsReach(count: number): Promise<number> {
  for (let waited = 0; waited < 5000 && runningThreads() !== count; waited += 20) await sleep(20);
  return runningThreads();
}

describe('a closed server leaves no thread of ours, and starts none later', () => {
  it.each<[string, (before: number) => Promise<void>]>([
    [
      "serve() (the library's) closed while another process builds its site: the thread prepared for the read after it ends",
      async (before) => {
        await lockHeld(async () => {
          const server = await serve({ dir: site(), port: 0 });
          // Its composing thread, and the reading thread prepared as the build was seen (BuildFollower).
          expect(await threadsReach(before + 2)).toBe(before + 2);
          await server.close();
        });
      },
    ],
    [
      "LiveSite closed while its replace()'s build runs: the prepared thread ends, the read after the build starts none",
      async (before) => {
        const live = await LiveSite.open(site());
        let release = () => {};
        const building = new Promise<void>((resolve) => (release = resolve));
        const replaced = live.replace(async () => {
          await building;
          const now = new Date(Date.now() + 5000);
          await utimes(join(site(), MANIFEST_PATH), now, now); // rebuilt: read again after it
        });
        expect(await threadsReach(before + 2)).toBe(before + 2);
        await live.close();
        release();
        await replaced;
      },
    ],
    [
      "LiveSite closed, then a replace() and another process's build: neither starts a thread",
      async () => {
        const live = await LiveSite.open(site());
        await live.close();
        await live.replace(async () => {
          const now = new Date(Date.now() + 10_000);
          await utimes(join(site(), MANIFEST_PATH), now, now);
        });
        await lockHeld(() => sleep(400)); // (its BuildFollower closed too)
      },
    ],
  ])(
    '%s',
    async (_, scenario) => {
      const before = runningThreads();
      await scenario(before);
      expect(await threadsReach(before)).toBe(before);
      // Nothing starts one later either.
      await sleep(300);
      expect(runningThreads()).toBe(before);
    },
    30_000,
  );

  it('a read under way as its reader closes fails, its thread ended; a read after close is refused, none started', async () => {
    const before = runningThreads();
    const reader = threadReader();
    const reading = reader(site(), 'locale');
    const closed = reader.close();
    await expect(reading).rejects.toThrow(/stopped/);
    await closed;
    expect(runningThreads()).toBe(before);
    await expect(reader(site(), 'locale')).rejects.toThrow(/its server is closed/);
    reader.prepare();
    expect(runningThreads()).toBe(before);
  });
});
