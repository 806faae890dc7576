import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifestHead } from '../src/store/manifest-file.js';
import { makeCity, tempDir } from './helpers.js';
import { createAt, SMALL_SITE, startCli } from './serve-helpers.js';
import { whenReady } from './started-process.js';

// A server that builds again and again (serve --watch at each change of the dataset, a writable
// server at each catch-up) says a warning of its settings alone (a base URL whose path Netlify
// would misread) once, at its first build, not at every rebuild; a warning of the data (a key no
// city field has) is said at every build that reads it, the data having changed.

const TOKEN = 'watch-warnings-token-0123456789';
const MISREAD = 'https://x.example/:v1/api';
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-watch-warnings-')));
afterAll(() => cleanup());

/** A JSON dataset of cities 1 to `count`, each with `more` keys. */
const dataset = (data: string, count: number, more: Record<string, unknown>) =>
  writeFile(data, JSON.stringify(Array.from({ length: count }, (_, i) => ({ ...makeCity(i + 1), ...more }))));

describe('a server rebuilding its site says a warning of its settings once, one of its data at each build', () => {
  // change: how the dataset grows twice (an edit of the file; a POST, built in by a catch-up).
  it.each<[string, { args: string[]; more?: Record<string, unknown>; change: 'edit' | 'post' }, [RegExp, number]]>([
    [
      'serve --watch, a base URL Netlify would misread: said at the first build, not at the two rebuilds',
      { args: ['--watch', '--base-url', MISREAD], change: 'edit' },
      [/warning: the site leaves out Netlify's rules for its endpoint/g, 1],
    ],
    [
      "serve --writable, the same base URL: said at the first build, not at the two catch-ups' builds",
      { args: ['--writable', '--base-url', MISREAD], change: 'post' },
      [/warning: the site leaves out Netlify's rules for its endpoint/g, 1],
    ],
    [
      'serve --watch, a key no city field has (the data): said at each of the three builds that read it',
      { args: ['--watch'], more: { nickname: 'x' }, change: 'edit' },
      [/warning: .*ignored unknown key "nickname"/g, 3],
    ],
  ])('%s', async (label, { args, more = {}, change }, [warning, said]) => {
    const dir = join(root, label.replace(/\W+/g, '-').slice(0, 50));
    const [data, site] = [`${dir}.json`, join(dir, 'site')];
    await dataset(data, 11, more);
    const served = await startCli([site, '--data', data, '--port', '0', ...SMALL_SITE, ...args], {
      CITIES_API_TOKEN: TOKEN,
    });
    const following = { ...served, name: 'serve' };
    try {
      for (const count of [12, 13]) {
        if (change === 'edit') await dataset(data, count, more);
        else expect((await createAt(`${served.url}/:v1/api`, TOKEN, `Posted ${count}`)).status).toBe(201);
        // Each change built in before the next: two builds, never one for both.
        const rebuilt = new RegExp(`changed: rebuilt, now ${count} cities`);
        await whenReady(
          following,
          async () =>
            change === 'edit'
              ? rebuilt.test(served.output())
              : (await readManifestHead(site).catch(() => null))?.dataset.count === count,
          50,
        );
      }
    } finally {
      await served.stop();
    }
    expect({ said: served.output().match(warning)?.length ?? 0 }).toEqual({ said });
  });
});
