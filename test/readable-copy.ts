import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

// The package as installed, copied where any user can read it: another user (`nobody`) runs the
// CLI from there, since the clone may sit under a directory only its owner can enter.

/** Where `name` resolves from a package at `from`: its node_modules, then each parent's, up to root's. */
function located(from: string, name: string, root: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(candidate)) return candidate;
    if (dir === root || dir === dirname(dir)) return undefined;
  }
}

/** Directories 755, files 644, by find and chmod (fs/promises' chmod per entry cost the test's process a thread-pool trip each). */
function readableByAll(path: string): void {
  execFileSync('find', [
    path,
    '-type',
    'd',
    '-exec',
    'chmod',
    '755',
    '{}',
    '+',
    '-o',
    '-type',
    'f',
    '-exec',
    'chmod',
    '644',
    '{}',
    '+',
  ]);
}

/** `cp -R` (a link followed when `dereference`), not fs.cp: fs.cp copied file by file in the test's own process. */
async function copy(from: string, to: string, dereference = false): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  execFileSync('cp', ['-R', dereference ? '-L' : '-P', from, to]);
}

/**
 * The package's `files` (bin/, lib/, ...), package.json and the packages its dependencies need
 * at run time, copied from `root` into a new directory every user can read and enter.
 */
export async function readableCopy(root: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'cities-api-copy-'));
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { files: string[] };
  for (const part of [...manifest.files, 'package.json']) await copy(join(root, part), join(dir, part));
  const copied = new Set<string>();
  const copyDependencies = async (packageDir: string): Promise<void> => {
    const meta = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const names = Object.keys({ ...meta.dependencies, ...meta.optionalDependencies });
    for (const name of names) {
      const found = located(packageDir, name, root);
      if (!found || copied.has(found)) continue;
      copied.add(found);
      await copy(found, join(dir, relative(root, found)), true);
      await copyDependencies(found);
    }
  };
  await copyDependencies(root);
  readableByAll(dir);
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
