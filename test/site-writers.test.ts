import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadWriters, recordWriter, servedByWriter } from '../src/app/site-writers.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-site-writers-')));
afterAll(() => cleanup());

/** A pid no process has: past the largest any system gives (Linux's PID_MAX_LIMIT, 2^22). */
const DEAD = 2 ** 22 + 1;

// The records of a site's writable servers beside it (`.NAME.writer-PID-TAG`): a site is served
// by a writer while one is there, live or dead; a dead one's is removed (by a build, once it has
// folded the log in), never a live one's, nor a file only named alike.
describe("a site's writable servers, as recorded beside it", () => {
  let n = 0;
  it.each<[string, (site: string) => Promise<unknown> | unknown, { served: boolean; afterForget: string[] }]>([
    ['none', () => {}, { served: false, afterForget: [] }],
    [
      'this process, recorded (recordWriter)',
      (site) => recordWriter(site),
      { served: true, afterForget: ['writer-self'] },
    ],
    [
      'this process, recorded for a site whose parent is not there yet (made for the record, as its first build would)',
      async (site) => {
        const deeper = join(site, '..', 'new', 'site');
        await recordWriter(deeper);
        expect(servedByWriter(deeper)).toBe(true);
      },
      { served: false, afterForget: ['new'] },
    ],
    [
      'this process, recorded then stopped (its removal called)',
      async (site) => (await recordWriter(site))(),
      { served: false, afterForget: [] },
    ],
    [
      'a dead process (killed): served until forgotten',
      (site) => writeFileSync(`${site}/../.site.writer-${DEAD}-0badc0de`, ''),
      { served: true, afterForget: [] },
    ],
    [
      'files only named alike (another site, no tag, a user file): none',
      (site) => {
        for (const name of ['.site2.writer-1-0badc0de', `.site.writer-${DEAD}`, '.site.writer-notes.txt'])
          writeFileSync(join(site, '..', name), '');
      },
      { served: false, afterForget: ['.site2.writer-1-0badc0de', `.site.writer-${DEAD}`, '.site.writer-notes.txt'] },
    ],
  ])('%s', async (_, record, expected) => {
    const parent = join(root, `place-${++n}`);
    const site = join(parent, 'site');
    mkdirSync(site, { recursive: true });
    await record(site);
    const served = servedByWriter(site);
    await (await deadWriters(site))();
    const left = readdirSync(parent)
      .filter((name) => name !== 'site')
      .map((name) => (name.startsWith(`.site.writer-${process.pid}-`) ? 'writer-self' : name))
      .sort();
    expect({ served, afterForget: left }).toEqual({ ...expected, afterForget: [...expected.afterForget].sort() });
  });
});
