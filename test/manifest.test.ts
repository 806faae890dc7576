import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { manifestHead, sameInput, settingsOf } from '../src/app/build-settings.js';
import { manifestJson, manifestText, MANIFEST_PATH, sortedFiles, type ManifestHead } from '../src/site/manifest.js';
import { READ_BYTES, readManifest, readManifestHead, readSiteFiles } from '../src/store/manifest-file.js';
import { tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-manifest-')));
afterAll(() => cleanup());

const head: ManifestHead = {
  generator: 'cities-api',
  version: '1.0.0',
  settings: {
    baseUrl: 'https://example.org',
    collation: 'codepoint',
    pageSizes: [10],
    orderings: ['default'],
    defaultPageSize: 10,
    compression: 'fast',
    liveUrl: null,
  },
  dataset: { count: 2, sha256: 'ab' },
};

describe('manifestJson writes what JSON.stringify of the sorted manifest would, and both readers read it back', () => {
  it.each<[string, Record<string, string>]>([
    ['no files', {}],
    [
      'files out of order',
      { 'cities/default/default/2.json': 'b', 'cities/default/default/1.json': 'a', _headers: 'c' },
    ],
    ['paths that need escaping', { 'odd/"quoted"\\name.json': 'x', 'é/ü.json': 'y' }],
    [
      'a list longer than one piece of manifestText',
      Object.fromEntries(
        Array.from({ length: 3000 }, (_, i) => [`cities/name_en/10/${3000 - i}.json`, 'f'.repeat(64)]),
      ),
    ],
  ])('%s', async (name, files) => {
    const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const text = manifestJson(head, files);
    const pieces = [...manifestText(head, sortedFiles(files))];
    expect(pieces.join('')).toBe(text);
    // Pieces of about 64 KiB: never the whole list in one string when it is longer.
    expect(pieces.slice(0, -1).every((piece) => piece.length >= 64 * 1024 && piece.length < 65 * 1024)).toBe(true);
    expect(pieces.length > 1).toBe(text.length > 65 * 1024);
    expect(text).toBe(`${JSON.stringify({ ...head, files: sorted }, null, 1)}\n`);
    const dir = join(root, name.replaceAll(' ', '-'));
    await mkdir(join(dir, '_cities-api'), { recursive: true });
    await writeFile(join(dir, MANIFEST_PATH), text);
    expect(await readManifest(dir)).toEqual({ ...head, files: sorted });
    expect(await readManifestHead(dir)).toEqual(head);
  });
});

/** Non-ASCII paths, with a first path of the length that puts the byte after the first read inside a 2-byte character. */
function splitAtRead(): Record<string, string> {
  const hash = 'f'.repeat(64);
  const paths = Object.fromEntries(
    Array.from({ length: 9000 }, (_, i) => [`cities/${'é'.repeat(40)}/${i}.json`, hash]),
  );
  for (let pad = 0; ; pad++) {
    const files = { [`a${'x'.repeat(pad)}`]: hash, ...paths };
    if ((Buffer.from(manifestJson(head, files))[READ_BYTES]! & 0xc0) === 0x80) return files;
  }
}

describe('readSiteFiles reads the files a manifest lists, in its order, compactly: what readManifest reads', () => {
  const hex = (i: number) => i.toString(16).padStart(64, '0');
  const many = Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [`cities/name_en/10/${i}.json`, hex(i)]));
  it.each<[string, Record<string, string>, (files: Record<string, string>) => string]>([
    ['as the build writes it', { 'b.json': hex(2), 'a.json': hex(1) }, (files) => manifestJson(head, files)],
    [
      'paths that need escaping',
      { 'odd/"quoted"\\name.json': hex(1), 'é/ü.json': hex(2) },
      (files) => manifestJson(head, files),
    ],
    ['no files', {}, (files) => manifestJson(head, files)],
    ['a list longer than one read', many, (files) => manifestJson(head, files)],
    ['a character split by the end of a read: read whole', splitAtRead(), (files) => manifestJson(head, files)],
    [
      'laid out otherwise (one line): parsed whole',
      { 'b.json': hex(2), 'a.json': hex(1) },
      (files) => JSON.stringify({ ...head, files }),
    ],
    ['a hash that is not one: listed, matching no file', { 'a.json': 'nothex' }, (files) => manifestJson(head, files)],
  ])('%s', async (name, files, text) => {
    const dir = join(root, `site-files-${name.replace(/\W+/g, '-')}`);
    await mkdir(join(dir, '_cities-api'), { recursive: true });
    await writeFile(join(dir, MANIFEST_PATH), text(files));
    const { files: whole, ...wholeHead } = (await readManifest(dir))!;
    const { files: list, ...listHead } = (await readSiteFiles(dir))!;
    expect(listHead).toEqual(wholeHead);
    const paths = Array.from({ length: list.size }, (_, i) => list.path(i));
    expect(paths).toEqual(Object.keys(whole));
    expect(paths.map((path) => list.hashOf(path) === whole[path])).toEqual(
      paths.map((path) => /^[0-9a-f]{64}$/.test(whole[path]!)),
    );
  });

  it('no manifest: null', async () => {
    expect(await readSiteFiles(join(root, 'nothing-here'))).toBeNull();
  });
});

describe('the manifest records the ICU, CLDR and Unicode data the site was built with, and the format of its files', () => {
  let root: string;
  let done: () => Promise<void>;
  beforeAll(async () => ({ dir: root, cleanup: done } = await tempDir('cities-icu-')));
  afterAll(() => done());
  const site = () => join(root, 'site');
  const buildIt = () =>
    build({
      data: join(import.meta.dirname, '../data/cities.csv'),
      out: site(),
      orderings: ['default', 'name_en'],
      pageSizes: [20],
      compress: false,
    });

  it('as process.versions says', async () => {
    await buildIt();
    expect((await readManifest(site()))!.runtime).toEqual({
      icu: process.versions.icu,
      cldr: process.versions.cldr,
      unicode: process.versions.unicode,
    });
  });

  it("and the format of the site's files (SITE_FORMAT: 2, fine blocks of compact cities)", async () => {
    await buildIt();
    expect((await readManifest(site()))!.format).toBe(2);
  });

  it.each([
    ['another ICU version', (m: Record<string, any>) => void (m.runtime.icu = '1.0')],
    ['another CLDR version', (m: Record<string, any>) => void (m.runtime.cldr = '1.0')],
    ['another Unicode version', (m: Record<string, any>) => void (m.runtime.unicode = '1.0')],
    ['none recorded (a site from an older cities-api)', (m: Record<string, any>) => void delete m.runtime],
  ])('%s: the site is not up to date, it is rebuilt and records this Node again', async (_, edit) => {
    await buildIt();
    expect((await buildIt()).upToDate).toBe(true);
    const file = join(site(), MANIFEST_PATH);
    const manifest = JSON.parse(await readFile(file, 'utf8')) as Record<string, any>;
    edit(manifest);
    await writeFile(file, `${JSON.stringify(manifest, null, 1)}\n`);
    const again = await buildIt();
    expect(again.upToDate).toBe(false);
    expect((await readManifest(site()))!.runtime!.icu).toBe(process.versions.icu);
    expect((await buildIt()).upToDate).toBe(true);
  });
});

describe('a site is built from the same input only in the same format (SITE_FORMAT): one of this version built before is rebuilt', () => {
  const head = manifestHead(settingsOf({ data: 'cities.csv' }), { count: 48, sha256: 'a'.repeat(64) });
  it.each<[string, (built: ManifestHead) => ManifestHead, boolean]>([
    ['as this build would write it: the same', (built) => built, true],
    [
      'no format recorded (this version before fine blocks of compact cities, d4506b1): not the same',
      ({ format: _, ...built }) => built,
      false,
    ],
    ['format 1: not the same', (built) => ({ ...built, format: 1 }), false],
  ])('%s', (_, old, same) => expect(sameInput(old(structuredClone(head)), head)).toBe(same));
});
