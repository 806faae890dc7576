import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isDurable, isUnsynced, markDurable, markUnsynced } from '../src/store/durable-marks.js';
import { MANIFEST_PATH } from '../src/site/manifest.js';
import { tempDir } from './helpers.js';

// The marks beside a site (`.NAME.durable`, `.NAME.unsynced`) are made without following a link
// found at their path: a user's file a link points to is never truncated. The durable mark, the one
// that spares a durable build its syncs, counts only as a regular file naming the manifest in place.

/** A directory holding dist/ with a manifest: its path and its site's. */
async function siteDir() {
  const { dir: root, cleanup } = await tempDir('durable-marks-');
  const dist = join(root, 'dist');
  mkdirSync(dirname(join(dist, MANIFEST_PATH)), { recursive: true });
  writeFileSync(join(dist, MANIFEST_PATH), '{"a":1}');
  return { root, dist, cleanup };
}

describe('a durable mark never writes through a link at its path', () => {
  it.each([
    ['markDurable, a link where .dist.durable goes', '.dist.durable', markDurable, isDurable],
    ['markUnsynced, a link where .dist.unsynced goes', '.dist.unsynced', markUnsynced, isUnsynced],
  ])('%s: the linked file keeps its bytes', async (_name, mark, make, present) => {
    const { root, dist, cleanup } = await siteDir();
    writeFileSync(join(root, 'mine.txt'), 'a file of the user');
    symlinkSync(join(root, 'mine.txt'), join(root, mark));
    await make(dist);
    expect({ kept: readFileSync(join(root, 'mine.txt'), 'utf8'), marked: await present(dist) }).toEqual({
      kept: 'a file of the user',
      marked: true,
    });
    await cleanup();
  });
});

describe('the durable mark counts only for the site it was made for', () => {
  const mark = (root: string) => join(root, '.dist.durable');
  it.each<[string, (root: string, dist: string) => void, boolean]>([
    ['made for the manifest in place', () => undefined, true],
    [
      'a link planted at its path, to a file holding a mark',
      (root) => {
        writeFileSync(join(root, 'copy'), readFileSync(mark(root)));
        rmSync(mark(root));
        symlinkSync(join(root, 'copy'), mark(root));
      },
      false,
    ],
    [
      'a directory planted at its path',
      (root) => {
        rmSync(mark(root));
        mkdirSync(mark(root));
      },
      false,
    ],
    [
      'the site replaced since (another manifest file, the same bytes)',
      (_root, dist) => {
        const manifest = join(dist, MANIFEST_PATH);
        writeFileSync(`${manifest}.new`, readFileSync(manifest));
        renameSync(`${manifest}.new`, manifest);
      },
      false,
    ],
    ['the site gone', (_root, dist) => rmSync(dist, { recursive: true }), false],
    ['an empty mark (its bytes lost in a power loss)', (root) => writeFileSync(mark(root), ''), false],
  ])('%s', async (_name, change, durable) => {
    const { root, dist, cleanup } = await siteDir();
    await markDurable(dist);
    change(root, dist);
    expect(await isDurable(dist)).toBe(durable);
    await cleanup();
  });
});
