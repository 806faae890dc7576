import { mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CityLog } from '../src/dataset/city-log.js';
import { build, CitiesApiError, SAMPLE_DATASET, serve, type BuildOptions, type ServeOptions } from '../src/index.js';
import { makeCity, readTree, tempDir } from './helpers.js';

// A library caller's callback that throws stops build() or serve() with a CitiesApiError naming
// the callback and saying what it threw (the thrown error its `cause`): never the caller's own error
// escaping from deep inside. What was built stays as it was (the site's files unchanged, nothing
// left beside it), and a serve() that was starting listens no more. A callback is not awaited: an
// async one that rejects is said as a warning, never an unhandled rejection ending the process.

let root: string;
let cleanup: () => Promise<void>;
let sample: string;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-callbacks-'));
  sample = await readFile(SAMPLE_DATASET, 'utf8');
});
afterAll(() => cleanup());

type Dataset = 'small' | 'large' | 'extra column' | 'logged city';
const SETTINGS = { orderings: ['default'], pageSizes: [10], compression: 'none' } as const;

/** A dataset of its kind in a directory of its own: the sample, one of 1 MB or more (built in a thread), one with a column no city has (a warning), or one with a city a writable server logged (told to `log`). */
async function dataset(kind: Dataset, name: string): Promise<{ dir: string; data: string }> {
  const dir = join(root, name.replace(/\W+/g, '-'));
  const data = join(dir, 'cities.csv');
  const [header, ...rows] = sample.trimEnd().split('\n');
  const lines =
    kind === 'large'
      ? [
          header,
          ...Array.from(
            { length: 60 * rows.length },
            (_, i) => `${i + 1}${rows[i % rows.length]!.replace(/^\d+/, '')}`,
          ),
        ]
      : kind === 'extra column'
        ? [`${header},extra`, ...rows.map((row) => `${row},x`)]
        : [header, ...rows];
  await mkdir(dir);
  await writeFile(data, `${lines.join('\n')}\n`);
  return { dir, data };
}

/** The dataset changed (a city renamed), so that a build would rewrite the site; and, for `logged city`, a city logged beside it. */
async function change(kind: Dataset, data: string): Promise<void> {
  await writeFile(data, (await readFile(data, 'utf8')).replace('Cairo', 'Cairo renamed'));
  if (kind === 'logged city') await CityLog.of(await realpath(data)).append([makeCity(100_000)]);
}

const thrown = new Error('the caller failed');
const boom = () => {
  throw thrown;
};

describe('build(): a callback that throws is a CitiesApiError naming it, the site as it was', () => {
  it.each<[string, Dataset, keyof BuildOptions]>([
    ['onRead, read here', 'small', 'onRead'],
    ['onStart, planned here', 'small', 'onStart'],
    ['onProgress, written here', 'small', 'onProgress'],
    ['onWarning, an extra column', 'extra column', 'onWarning'],
    ['log, a logged city folded in', 'logged city', 'log'],
    ['onRead, in a thread', 'large', 'onRead'],
    ['onStart, in a thread', 'large', 'onStart'],
    ['onProgress, in a thread', 'large', 'onProgress'],
  ])('%s', async (name, kind, callback) => {
    const { dir, data } = await dataset(kind, `build ${name}`);
    const out = join(dir, 'site');
    await build({ data, out, ...SETTINGS });
    await change(kind, data);
    const [site, beside] = [await readTree(out), await readdir(dir)];
    const error = await build({ data, out, ...SETTINGS, [callback]: boom }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({
      message: `build()'s \`${callback}\` callback threw: the caller failed`,
      cause: thrown,
    });
    expect(await readTree(out)).toEqual(site);
    // A fold keeps the dataset's previous version (cities.csv.bak) and records itself (.cities.csv.folds), as every fold does; the dataset is whole.
    const folded = kind === 'logged city' ? ['.cities.csv.folds', 'cities.csv.bak'] : [];
    expect(await readdir(dir)).toEqual([...beside, ...folded].sort());
    // Nothing held or half-done: the next build builds (the logged city in it).
    const next = await build({ data, out, ...SETTINGS });
    expect(next.cities).toBe(kind === 'large' ? 2880 : kind === 'logged city' ? 49 : 48);
  });
});

/** A port free now. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Whether `port` can be listened on: no server left on it. */
const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer()
      .once('error', () => resolve(false))
      .listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

describe('serve(): a callback of its first build that throws is a CitiesApiError naming it, nothing listening', () => {
  it.each<[string, Dataset, ServeOptions]>([
    ['firstBuild.onRead', 'small', { firstBuild: { onRead: boom } }],
    ['firstBuild.onStart', 'small', { firstBuild: { onStart: boom } }],
    ['firstBuild.onProgress', 'small', { firstBuild: { onProgress: boom } }],
    ['onWarning', 'extra column', { onWarning: boom }],
  ])('%s', async (name, kind, callbacks) => {
    const { dir, data } = await dataset(kind, `serve ${name}`);
    const site = join(dir, 'site');
    await build({ data, out: site, ...SETTINGS });
    await change(kind, data);
    const [files, beside] = [await readTree(site), await readdir(dir)];
    const port = await freePort();
    const error = await serve({
      dir: site,
      data,
      port,
      host: '127.0.0.1',
      orderings: ['default'],
      pageSizes: [10],
      ...callbacks,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({ message: `serve()'s \`${name}\` callback threw: the caller failed`, cause: thrown });
    expect(await isFree(port)).toBe(true);
    expect(await readTree(site)).toEqual(files);
    expect(await readdir(dir)).toEqual(beside);
  });
});

describe('build(): an async callback that rejects is said as a warning, the build done', () => {
  it.each<[string, keyof BuildOptions]>([
    ['onStart', 'onStart'],
    ['onProgress', 'onProgress'],
  ])('%s', async (name, callback) => {
    const { dir, data } = await dataset('small', `async ${name}`);
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(warning.message);
    process.on('warning', warned);
    try {
      const rejects = async () => {
        throw thrown;
      };
      const result = await build({ data, out: join(dir, 'site'), ...SETTINGS, [callback]: rejects });
      expect(result.cities).toBe(48);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([`cities-api: build()'s \`${callback}\` callback threw (the caller failed)`]);
    } finally {
      process.off('warning', warned);
    }
  });
});
