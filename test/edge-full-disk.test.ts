import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KIT, tempDir } from './helpers.js';

// The user's files of an edge project (worker.js, wrangler.jsonc, netlify.toml, main.js...) are
// written once, when missing, and never again. One written straight to its name (open with `wx`)
// that the disk could not hold was left half-written: the next run took it for the user's and kept it.

const { full } = vi.hoisted(() => ({ full: new Set<string>() }));
vi.mock('node:fs/promises', async (original) =>
  (await import('./dev-full.js')).faultyFsPromises(await original(), { full }),
);
const { build } = await import('../src/app/build.js');
const { PLATFORMS, writeEdgeProject } = await import('../src/app/edge-project.js');

let root: string;
let cleanup: () => Promise<void>;
/** A folder holding the site as `dist`, built once: each project is a copy of it (Netlify's site is inside its project). */
let pristine: string;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-edge-full-disk-'));
  pristine = join(root, 'pristine');
  await build({
    data: join(KIT, 'cities11.csv'),
    out: join(pristine, 'dist'),
    collation: 'codepoint',
    compress: false,
  });
}, 120_000);
afterAll(() => cleanup());

let n = 0;
function fresh(platform: string): { site: string; out: string } {
  const dir = join(root, `p${n++}`);
  execFileSync('cp', ['-a', pristine, dir]);
  return { site: join(dir, 'dist'), out: platform === 'netlify' ? dir : join(dir, `edge-${platform}`) };
}

describe.each(PLATFORMS)('edge %s on a full disk at one of the user files', (platform) => {
  it('nothing is left at its name, and the next run writes it whole', async () => {
    const reference = fresh(platform);
    const { userFiles } = await writeEdgeProject(platform, reference.site, reference.out);
    expect(userFiles.length).toBeGreaterThan(0);
    for (const file of userFiles) {
      const { site, out } = fresh(platform);
      const path = join(out, file);
      full.add(path).add(join(dirname(path), `.${basename(path)}.${process.pid}.*.draft`));
      try {
        await expect(writeEdgeProject(platform, site, out)).rejects.toThrow(
          `no space left for the edge project directory ${out}: free some space and try again (ENOSPC)`,
        );
      } finally {
        full.clear();
      }
      expect(existsSync(path)).toBe(false);
      expect((await readdir(dirname(path))).filter((name) => name.endsWith('.draft'))).toEqual([]);
      expect((await writeEdgeProject(platform, site, out)).files).toContain(file);
      expect(await readFile(path)).toEqual(await readFile(join(reference.out, file)));
    }
  });
});
