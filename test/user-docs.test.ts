import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli-helpers.js';
import { KIT, tempDir } from './helpers.js';
import { links, splitCode } from './markdown.js';
import { ROOT } from './package-helpers.js';

// The README as a user of the package reads it (issue #27 item 6): the clone's two commands first
// and marked as the contributors', then install, build and deploy; every guide listed; its
// .gitignore advice covering what a build and a writable server leave beside the user's files;
// contributor material in CONTRIBUTING.md, which does not ship.

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const guides = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .sort();

describe('the README is for users first', () => {
  it("opens with the clone's two commands, then says they are the contributors'", () => {
    const lines = readme.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      '# cities-api',
      '',
      expect.stringMatching(/^ {4}npm ci && npm start +# /),
      expect.stringMatching(/^ {4}npm ci && npm test +# /),
    ]);
    expect(lines.slice(4, 8).join(' ')).toMatch(/for contributors, in a clone of this repository/);
  });

  it('then install, build and deploy, in that order, before the commands', () => {
    const headings = [...readme.matchAll(/^## (.*)$/gm)].map((m) => m[1]);
    expect(headings.slice(0, 4)).toEqual(['Install', 'Build', 'Deploy', 'Commands']);
  });

  it.each(guides)('lists the guide docs/%s', (guide) => {
    const deploy = readme.slice(readme.indexOf('\n## Deploy'), readme.indexOf('\n## Commands'));
    expect(links(deploy).map((l) => l.target)).toContain(`docs/${guide}`);
  });

  it.each([
    ['Benchmark', /^#+ Benchmark/m],
    ['Soak test', /^#+ Soak test/m],
    ['Layout of the code', /^#+ Layout of the code/m],
  ])("the contributors' section %s is in CONTRIBUTING.md, not the README", (_, heading) => {
    expect(readme).not.toMatch(heading);
    expect(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8')).toMatch(heading);
  });
});

describe("the README's .gitignore advice leaves git nothing of cities-api's to see", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir, cleanup } = await tempDir('cities-gitignore-')));
  afterAll(() => cleanup());

  it("after a build, with the lock and a staging tree a killed build would leave, and a writable server's files beside the dataset", async () => {
    const block = splitCode(readme).blocks.find((b) => b.text.startsWith('# .gitignore'))!;
    const git = (...args: string[]) => promisify(execFile)('git', args, { cwd: dir });
    await git('init', '-q');
    await mkdir(join(dir, 'data'));
    await copyFile(join(KIT, 'cities11.csv'), join(dir, 'data/cities.csv'));
    await writeFile(join(dir, '.gitignore'), `${block.text}\n`);
    const built = await cli(
      dir,
      'build',
      '--orderings',
      'default',
      '--page-sizes',
      '20',
      '--base-url',
      'https://x.example.org',
    );
    expect(built.code, built.stderr).toBe(0);
    for (const left of [
      '.dist.lock',
      '.dist.staging-4242/x.json',
      '.dist.previous-4242/x.json',
      'data/.cities.csv.lock',
      // serve --writable's: a lock draft, the write-ahead log, a staged dataset, the previous dataset.
      'data/.cities.csv.lock-4242',
      'data/.cities.csv.wal',
      'data/.cities.csv.tmp-4242.csv',
      'data/.cities.csv.tmp-4242.1a2b3c.7.csv',
      'data/cities.csv.bak',
    ]) {
      await mkdir(join(dir, left, '..'), { recursive: true });
      await writeFile(join(dir, left), '');
    }
    const { stdout } = await git('status', '--porcelain', '--untracked-files=all');
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual(['?? .gitignore', '?? data/cities.csv']);
  });
});
