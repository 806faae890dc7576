import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// CONTRIBUTING.md's "Layout of the code" lists every module of src/ under its folder, with the folder's
// one-line job as its README.md says it: checked here so that it cannot go stale.

const ROOT = resolve(import.meta.dirname, '..');
const section = (() => {
  const text = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
  const start = text.indexOf('## Layout of the code');
  return text.slice(start, text.indexOf('\n## ', start + 1));
})();
const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
/** Each folder's bullet in the section: its job line, and the modules it names. */
const bullets = new Map(
  [...section.matchAll(/^- \*\*`(\w+)\/`\*\*: (.*)\n((?: {2}.*\n?)*)/gm)].map((m) => [
    m[1]!,
    { job: m[2]!, modules: [...m[3]!.matchAll(/`([\w/-]+\.ts)`/g)].map((n) => n[1]!).sort() },
  ]),
);

describe('CONTRIBUTING.md lists every module under its folder', () => {
  it('a bullet for each folder of src/, and none for a folder that does not exist', () => {
    expect([...bullets.keys()].sort()).toEqual(folders);
  });

  it.each(folders)('%s/: its job as its README.md says it, and exactly its modules', (folder) => {
    const modules = readdirSync(join(ROOT, 'src', folder), { recursive: true, encoding: 'utf8' })
      .map((f) => f.split('\\').join('/'))
      .filter((f) => f.endsWith('.ts'))
      .sort();
    const job = readFileSync(join(ROOT, 'src', folder, 'README.md'), 'utf8');
    expect(job.trim().split('\n')).toHaveLength(1);
    expect(bullets.get(folder)).toEqual({ job: job.trim(), modules });
  });
});

// One module, one job, named for it: about 200 lines at most. Over it, a cohesive piece moves into a module of its own.
const MAX_LINES = 200;

describe(`each module of src/ is ${MAX_LINES} lines at most`, () => {
  const modules = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .map((f) => f.split('\\').join('/'))
    .filter((f) => f.endsWith('.ts'))
    .sort();
  it.each(modules)('%s', (module) => {
    const lines = readFileSync(join(ROOT, 'src', module), 'utf8').split('\n');
    expect(lines.at(-1) === '' ? lines.length - 1 : lines.length).toBeLessThanOrEqual(MAX_LINES);
  });
});
