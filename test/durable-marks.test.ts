import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isDurable, isUnsynced, markDurable, markUnsynced } from '../src/store/durable-marks.js';
import { tempDir } from './helpers.js';

// The marks beside a site (`.NAME.durable`, `.NAME.unsynced`) are made without following a link
// found at their path: a user's file a link points to is never truncated.

describe('a durable mark never writes through a link at its path', () => {
  it.each([
    ['markDurable, a link where .dist.durable goes', '.dist.durable', markDurable, isDurable],
    ['markUnsynced, a link where .dist.unsynced goes', '.dist.unsynced', markUnsynced, isUnsynced],
  ])('%s: the linked file keeps its bytes', async (_name, mark, make, present) => {
    const { dir: root, cleanup } = await tempDir('durable-marks-');
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'mine.txt'), 'a file of the user');
    symlinkSync(join(root, 'mine.txt'), join(root, mark));
    await make(join(root, 'dist'));
    expect({ kept: readFileSync(join(root, 'mine.txt'), 'utf8'), marked: await present(join(root, 'dist')) }).toEqual({
      kept: 'a file of the user',
      marked: true,
    });
    await cleanup();
  });
});
