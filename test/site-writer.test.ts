import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, link, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dropToken, newToken } from '../src/fs/lock-tokens.js';
import { recoverSite } from '../src/store/site-recovery.js';
import { writeSite, type SiteEntry } from '../src/store/site-writer.js';
import { checkSite, siteLeftovers, treeDifferences } from './crash-helpers.js';
import { readTree, tempDir } from './helpers.js';

/**
 * Someone at work in the site directory while a build runs, at its last moment before the swap:
 * after what is not the site's was carried into the new tree (placeManifest comes next).
 */
const beforeSwap = vi.hoisted(() => ({ hook: undefined as (() => Promise<unknown>) | undefined }));
vi.mock('../src/store/place-manifest.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/store/place-manifest.js')>();
  return {
    ...real,
    placeManifest: async (...args: Parameters<typeof real.placeManifest>) => {
      await beforeSwap.hook?.();
      return real.placeManifest(...args);
    },
  };
});

const manifest = {
  generator: 'cities-api',
  version: 'test',
  settings: {
    baseUrl: 'http://x',
    collation: 'codepoint',
    pageSizes: [10],
    orderings: ['default'],
    defaultPageSize: 10,
    compression: 'fast',
    liveUrl: null,
  },
  dataset: { count: 0, sha256: '' },
} as const;
/** The same site, written without `.gz`/`.br`. */
const plain = { ...manifest, settings: { ...manifest.settings, compression: 'none' } } as const;
const entries = (n: number, text = 'v1'): SiteEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    path: `cities/p/${i}.json`,
    body: Buffer.from(`${text}-${i}`),
    compress: true,
  }));

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-writer-')));
afterAll(() => cleanup());

describe('writeSite keeps the previous site whole whatever happens', () => {
  it('a build that fails midway leaves the old site and no staging tree', async () => {
    const out = join(root, 'fail');
    await writeSite(out, entries(20), manifest, {});
    const before = await readTree(out);
    function* failing(): Generator<SiteEntry> {
      yield* entries(10, 'v2');
      throw new Error('disk on fire');
    }
    await expect(writeSite(out, failing(), manifest, {})).rejects.toThrow('disk on fire');
    const after = await readTree(out);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, bytes] of before) expect(bytes.equals(after.get(path)!)).toBe(true);
    expect(await siteLeftovers(out)).toEqual([]);
  });

  it('a disk that fills up (ENOSPC from a writer thread) is said with the path and what to do (exit 1), the old site whole, the next build working', async () => {
    const out = join(root, 'full-disk');
    await writeSite(out, entries(5), manifest, {});
    const before = await readTree(out);
    function* filling(): Generator<SiteEntry> {
      yield* entries(3, 'v2');
      throw new Error(`ENOSPC: no space left on device, write '${join(out, 'cities/p/3.json')}'`);
    }
    await expect(writeSite(out, filling(), manifest, {})).rejects.toMatchObject({
      exitCode: 1,
      message: `cannot build ${out}: ENOSPC: no space left on device, write '${join(out, 'cities/p/3.json')}'; free some space and build again (the site was left as it was)`,
    });
    expect(treeDifferences(before, await readTree(out))).toEqual([]);
    expect(await siteLeftovers(out)).toEqual([]);
    await expect(writeSite(out, entries(5, 'v2'), manifest, {})).resolves.toMatchObject({ written: 16 });
  });

  it('counts written, unchanged and removed files, compressed siblings included', async () => {
    const out = join(root, 'counts');
    expect(await writeSite(out, entries(4), manifest, {})).toEqual({
      files: 13,
      written: 13,
      unchanged: 0,
      removed: 0,
      kept: [],
    });
    const changed = [...entries(2), { path: 'cities/p/2.json', body: Buffer.from('changed'), compress: true }];
    expect(await writeSite(out, changed, manifest, {})).toEqual({
      files: 10,
      written: 4,
      unchanged: 6,
      removed: 3,
      kept: [],
    });
  });

  it.each([
    ['written anew', false],
    ['kept from the old site (linked)', true],
  ])(
    'an entry that asks is told where it was placed once it and its siblings are in the new tree: %s',
    async (_, again) => {
      const out = join(root, `placed-${again}`);
      if (again) await writeSite(out, entries(3), manifest, {});
      const told: string[] = [];
      const tracked = entries(3).map((entry) => ({
        ...entry,
        placed: (outcome: { file: string } | { error: unknown }) => {
          if (!('file' in outcome)) throw outcome.error;
          told.push(outcome.file);
          // Read now, as a build reads back its pages of every city: all three files are there.
          for (const name of [outcome.file, `${outcome.file}.gz`, `${outcome.file}.br`])
            expect(readFileSync(name).length).toBeGreaterThan(0);
        },
      }));
      await writeSite(out, tracked, manifest, {});
      expect(told.map((file) => file.slice(file.indexOf('cities/p/'))).sort()).toEqual([
        'cities/p/0.json',
        'cities/p/1.json',
        'cities/p/2.json',
      ]);
      expect(told.every((file) => !file.startsWith(`${out}/`))).toBe(true);
    },
  );

  it('an entry that cannot be written is told why, and the build fails with it', async () => {
    const out = join(root, 'placed-error');
    const outcomes: unknown[] = [];
    const unreadable: Iterable<Uint8Array> = {
      *[Symbol.iterator]() {
        throw new Error('no bytes');
      },
    };
    const failing: SiteEntry[] = [
      ...entries(2),
      { path: 'cities/x.json', body: unreadable, placed: (outcome) => outcomes.push(outcome) },
    ];
    await expect(writeSite(out, failing, manifest, {})).rejects.toThrow('no bytes');
    expect(outcomes).toEqual([{ error: new Error('no bytes') }]);
  });

  it('unchanged files keep their inode (hard links into the new tree)', async () => {
    const out = join(root, 'links');
    await writeSite(out, entries(3), manifest, {});
    const before = await stat(join(out, 'cities/p/1.json.br'));
    await writeSite(out, entries(3), manifest, {});
    expect((await stat(join(out, 'cities/p/1.json.br'))).ino).toBe(before.ino);
  });

  it('recovers the previous site when a build was killed between its two renames', async () => {
    const out = join(root, 'killed');
    await writeSite(out, entries(3), plain, {});
    const deadPid = 2 ** 22 + 7;
    await rename(out, join(root, `.killed.previous-${deadPid}`));
    await mkdir(join(root, `.killed.staging-${deadPid}`));
    // (A draft's pid is one a system gives: at most 2^22, which Linux's pids stay below; dead-drafts.ts.)
    await writeFile(join(root, `.killed.stat-cache-${2 ** 22}`), 'half a cache');
    await writeFile(join(root, `.killed.stat-cache-${2 ** 22}.k3j2h.17`), 'half a cache, named with its token');
    await recoverSite(out);
    expect([...(await readTree(out)).keys()].sort()).toContain('cities/p/0.json');
    expect(await siteLeftovers(out)).toEqual([]);
  });

  it('killed between its two renames beside an old tree kept earlier (someone’s file stranded in it): the site set aside last is moved back, the kept tree left', async () => {
    const out = join(root, 'killed-beside-kept');
    await writeSite(out, entries(4, 'v2'), plain, {});
    // Kept by an earlier build: its old site (3 pages), and someone's page where the site now has its own.
    const kept = join(root, `.killed-beside-kept.previous-${2 ** 22 + 7}`);
    await writeSite(join(root, 'kept-tree'), entries(3), plain, {});
    await rename(join(root, 'kept-tree'), kept);
    await writeFile(join(kept, 'cities/p/3.json'), 'my page');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await rename(out, join(root, `.killed-beside-kept.previous-${2 ** 22 + 8}`));
    await recoverSite(out);
    expect(await readFile(join(out, 'cities/p/3.json'), 'utf8')).toBe('v2-3');
    expect(await readFile(join(kept, 'cities/p/3.json'), 'utf8')).toBe('my page');
    expect(await siteLeftovers(out)).toEqual([`.killed-beside-kept.previous-${2 ** 22 + 7}`]);
  });
});

describe('a killed build’s recovery removes only names a build gives', () => {
  it.each([
    ['a staging tree named by a word', '.lookalike.staging-old'],
    ['a previous tree named by a word', '.lookalike.previous-backup'],
    ['a stat cache copy', '.lookalike.stat-cache-copy'],
    ['a lock draft with an extension', '.lookalike.lock-1.bak'],
    ["a directory named as a dead builder's stat cache draft (a file)", `.lookalike.stat-cache-${2 ** 22}`],
    ['a staging tree with a numbered suffix (only previous trees get one)', `.lookalike.staging-${2 ** 22 + 7}.1`],
  ])('%s (%s) is kept', async (_, name) => {
    const out = join(root, 'lookalike');
    await rm(out, { recursive: true, force: true });
    await writeSite(out, entries(3), plain, {});
    await mkdir(join(root, name), { recursive: true });
    await writeFile(join(root, name, 'mine.txt'), 'mine');
    await recoverSite(out);
    expect(await readFile(join(root, name, 'mine.txt'), 'utf8')).toBe('mine');
    await rm(join(root, name), { recursive: true });
  });
});

// The threads of a process share its pid: a lock draft of this pid may be another thread's, taking
// the site's lock right now (between its draft and its link), whose link then failed (ENOENT) when
// a recovery removed the draft. Its taker removes it, always; a dead process's that had this pid is
// in no taker's way (each removes its own draft's name before writing it).
describe('a recovery holding the lock, and the lock drafts beside the site', () => {
  const held = newToken();
  afterAll(() => dropToken(held));
  it.each<[string, 'kept' | 'removed', (out: string) => string]>([
    ["another thread's of this process, taking the lock (-PID.N)", 'kept', (out) => `.${out}.lock-${process.pid}.7`],
    ["this process's main thread's, taking the lock (-PID)", 'kept', (out) => `.${out}.lock-${process.pid}`],
    ["a dead process's (no process has its pid)", 'removed', (out) => `.${out}.lock-${2 ** 22 + 7}`],
    ["a dead process's thread's (-PID.N)", 'removed', (out) => `.${out}.lock-${2 ** 22 + 7}.3`],
  ])('%s: %s', async (_, kept, name) => {
    const out = join(root, `lock-drafts-${++lockDrafts}`);
    await writeSite(out, entries(3), plain, {});
    const draft = join(root, name(`lock-drafts-${lockDrafts}`));
    await writeFile(draft, `${process.pid}\n${held}\n`);
    await recoverSite(out);
    expect(await stat(draft).then(Boolean, () => false)).toBe(kept === 'kept');
    await rm(draft, { force: true });
  });

  it("a directory named as a dead process's lock draft (a file), holding someone's file, is kept", async () => {
    const out = join(root, 'lock-draft-directory');
    await writeSite(out, entries(3), plain, {});
    const directory = join(root, `.lock-draft-directory.lock-${2 ** 22 + 7}`);
    await mkdir(directory);
    await writeFile(join(directory, 'mine.txt'), 'mine');
    await recoverSite(out);
    expect(await readFile(join(directory, 'mine.txt'), 'utf8')).toBe('mine');
  });
});
let lockDrafts = 0;

describe('what someone puts in the site directory while a build runs is never deleted with the old tree', () => {
  // Each site holds entries(5) and someone's notes.txt; the build writes entries(6), whose 5.json is new.
  it.each<[string, (out: string) => Promise<unknown>, Record<string, string>, string[]]>([
    ['a file made at the top', (out) => writeFile(join(out, 'late.txt'), 'late'), { 'late.txt': 'late' }, ['late.txt']],
    [
      'a file made among the pages',
      (out) => writeFile(join(out, 'cities/p/late.txt'), 'late'),
      { 'cities/p/late.txt': 'late' },
      ['cities/p/late.txt'],
    ],
    [
      'a directory made, with a file',
      async (out) => {
        await mkdir(join(out, 'media/img'), { recursive: true });
        await writeFile(join(out, 'media/img/logo.svg'), '<svg/>');
      },
      { 'media/img/logo.svg': '<svg/>' },
      ['media/'],
    ],
    [
      'someone’s file saved again by an editor (a new file renamed over it)',
      async (out) => {
        await writeFile(join(out, 'notes.txt~'), 'edited');
        await rename(join(out, 'notes.txt~'), join(out, 'notes.txt'));
      },
      { 'notes.txt': 'edited' },
      ['notes.txt'],
    ],
  ])('%s: moved into the new site, the previous tree deleted', async (name, work, expected, kept) => {
    const out = join(root, `late-${name.length}`);
    await writeSite(out, entries(5), manifest, {});
    await writeFile(join(out, 'notes.txt'), 'mine');
    beforeSwap.hook = () => work(out);
    const result = await writeSite(out, entries(6, 'v2'), manifest, {}).finally(() => (beforeSwap.hook = undefined));
    const tree = await readTree(out);
    for (const [path, text] of Object.entries({ 'notes.txt': 'mine', ...expected }))
      expect(tree.get(path)?.toString(), path).toBe(text);
    expect(tree.get('cities/p/5.json')?.toString()).toBe('v2-5');
    expect(result.kept).toEqual(expect.arrayContaining(kept));
    expect(result.leftover).toBeUndefined();
    expect(await siteLeftovers(out)).toEqual([]);
  });

  it('a file made where the new site has its own: the site’s is in place, the previous tree kept for it and said', async () => {
    const out = join(root, 'late-clash');
    await writeSite(out, entries(5), manifest, {});
    beforeSwap.hook = () => writeFile(join(out, 'cities/p/5.json'), 'my page');
    const result = await writeSite(out, entries(6, 'v2'), manifest, {}).finally(() => (beforeSwap.hook = undefined));
    expect(await readFile(join(out, 'cities/p/5.json'), 'utf8')).toBe('v2-5');
    expect(result).toMatchObject({
      stranded: ['cities/p/5.json'],
      leftover: expect.stringMatching(/\.late-clash\.previous-\d+$/),
    });
    expect(await readFile(join(result.leftover!, 'cities/p/5.json'), 'utf8')).toBe('my page');
  });

  it('an old tree this process kept (someone’s file stranded in it) does not stop its next builds (serve --watch, --writable): each old tree goes aside under a name of its own', async () => {
    const out = join(root, 'late-kept');
    await writeSite(out, entries(5), manifest, {});
    beforeSwap.hook = () => writeFile(join(out, 'cities/p/5.json'), 'my page');
    const kept = await writeSite(out, entries(6, 'v2'), manifest, {}).finally(() => (beforeSwap.hook = undefined));
    beforeSwap.hook = () => writeFile(join(out, 'cities/p/6.json'), 'my other page');
    const again = await writeSite(out, entries(7, 'v3'), manifest, {}).finally(() => (beforeSwap.hook = undefined));
    expect(again.leftover).toBe(`${kept.leftover}.1`);
    await expect(writeSite(out, entries(7, 'v4'), manifest, {})).resolves.toMatchObject({ written: 7 * 3 + 1 });
    expect(await readFile(join(out, 'cities/p/6.json'), 'utf8')).toBe('v4-6');
    expect(await readFile(join(kept.leftover!, 'cities/p/5.json'), 'utf8')).toBe('my page');
    expect(await readFile(join(again.leftover!, 'cities/p/6.json'), 'utf8')).toBe('my other page');
  });

  it('a killed build’s previous tree: what someone put in it moves into the site, the rest is deleted', async () => {
    const out = join(root, 'late-killed');
    await writeSite(out, entries(3), plain, {});
    await writeFile(join(out, 'notes.txt'), 'mine');
    // As a build killed after its swap leaves it: the old site, someone's notes (carried: the same file), and a late file.
    const previous = join(root, `.late-killed.previous-${2 ** 22 + 7}`);
    await cp(out, previous, { recursive: true });
    await rm(join(previous, 'notes.txt'));
    await link(join(out, 'notes.txt'), join(previous, 'notes.txt'));
    await writeFile(join(previous, 'cities/p/late.txt'), 'late');
    await recoverSite(out);
    expect(await readFile(join(out, 'cities/p/late.txt'), 'utf8')).toBe('late');
    expect(await readFile(join(out, 'notes.txt'), 'utf8')).toBe('mine');
    expect(await siteLeftovers(out)).toEqual([]);
  });
});

describe('the stat cache (.NAME.stat-cache) is only trusted for what it recorded', () => {
  it('after a build killed between its swap and writing the cache (the old cache left), the next build trusts no stale record: it reads the files, reuses the intact ones and rewrites a damaged one', async () => {
    const out = join(root, 'stale-cache');
    const cache = join(root, '.stale-cache.stat-cache');
    await writeSite(out, entries(6), manifest, {});
    const stale = await readFile(cache);
    const changed = entries(6).map((e, i) => (i < 2 ? { ...e, body: Buffer.from(`v2-${i}`) } : e));
    await writeSite(out, changed, { ...manifest, version: 'test 2' }, {});
    await writeFile(cache, stale);
    await writeFile(join(out, 'cities/p/4.json.gz'), 'damaged');
    expect(await writeSite(out, changed, { ...manifest, version: 'test 2' }, {})).toMatchObject({
      written: 1,
      unchanged: 18,
    });
    expect((await checkSite(out)).problems).toEqual([]);
  });

  it.each([
    ['in place', (out: string) => join(out, 'cities/p/2.json')],
    ['through a hard link from outside the site', (out: string) => `${out}-outside-link`],
  ])(
    'a same-size edit with its mtime put back (%s) is rewritten by the next build: the ctime moved',
    async (how, at) => {
      const out = join(root, `ctime-${how.length}`);
      await writeSite(out, entries(4), manifest, {});
      await writeSite(out, entries(4), { ...manifest, version: 'test 2' }, {}); // a rebuild that links every file
      if (at(out) !== join(out, 'cities/p/2.json')) await link(join(out, 'cities/p/2.json'), at(out));
      execFileSync('touch', ['-r', at(out), `${out}-times`]);
      await writeFile(at(out), 'v9-2');
      execFileSync('touch', ['-r', `${out}-times`, at(out)]); // its times put back to the nanosecond
      expect(await writeSite(out, entries(4), { ...manifest, version: 'test 3' }, {})).toMatchObject({
        written: 2, // the page and the manifest
        unchanged: 11,
      });
      expect((await checkSite(out)).problems).toEqual([]);
    },
  );

  it('a site copied elsewhere (cp -a keeps mtimes, not inodes) has no records: every file is read, only a damaged one rewritten', async () => {
    const out = join(root, 'original');
    await writeSite(out, entries(4), manifest, {});
    await cp(out, join(root, 'copy'), { recursive: true, preserveTimestamps: true });
    await cp(join(root, '.original.stat-cache'), join(root, '.copy.stat-cache'));
    await writeFile(join(root, 'copy/cities/p/1.json'), 'v1-X');
    expect(await writeSite(join(root, 'copy'), entries(4), manifest, {})).toMatchObject({ written: 1, unchanged: 12 });
    expect((await checkSite(join(root, 'copy'))).problems).toEqual([]);
  });
});

describe('two builds never interleave', () => {
  it('a second build fails clearly while the first builder is alive', async () => {
    const out = join(root, 'locked');
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      await writeFile(join(root, '.locked.lock'), `${sleeper.pid}\n`);
      await expect(writeSite(out, entries(1), plain, {})).rejects.toThrow(
        `another build of ${out} is running (pid ${sleeper.pid}, lock ${join(root, '.locked.lock')})`,
      );
    } finally {
      sleeper.kill();
    }
  });

  it('a dead builder’s lock is taken over', async () => {
    const out = join(root, 'stale');
    await writeFile(join(root, '.stale.lock'), `${2 ** 22 + 9}\n`);
    await expect(writeSite(out, entries(1), plain, {})).resolves.toMatchObject({ written: 2 });
    expect(await siteLeftovers(out)).toEqual([]);
  });
});

describe('writer threads', () => {
  it('start even in a process run with flags threads refuse (node --input-type=module -e)', async () => {
    const out = join(root, 'eval');
    const code = `import { writeSite } from ${JSON.stringify(join(import.meta.dirname, '../lib/store/site-writer.js'))};
      const entries = Array.from({ length: 40 }, (_, i) => ({ path: 'cities/p/' + i + '.json', body: Buffer.from('page ' + i), compress: true }));
      const stats = await writeSite(${JSON.stringify(out)}, entries, ${JSON.stringify(manifest)}, {});
      console.log(JSON.stringify(stats));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code]);
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const status = await new Promise((resolve) => child.on('exit', resolve));
    expect({ status, stats: JSON.parse(stdout || 'null') }).toMatchObject({ status: 0, stats: { written: 121 } });
  });
});
