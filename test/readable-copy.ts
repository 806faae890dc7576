import { existsSync } from 'node:fs';
import { chmod, cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
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

async function readableByAll(path: string): Promise<void> {
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  await chmod(path, 0o755);
  for (const entry of entries) {
    if (entry.isDirectory()) await chmod(join(entry.parentPath, entry.name), 0o755);
    else if (entry.isFile()) await chmod(join(entry.parentPath, entry.name), 0o644);
  }
}

/**
 * The package's `files` (bin/, lib/, ...), package.json and the packages its dependencies need
 * at run time, copied from `root` into a new directory every user can read and enter.
 */
export async function readableCopy(root: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'cities-api-copy-'));
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { files: string[] };
  for (const part of [...manifest.files, 'package.json'])
    await cp(join(root, part), join(dir, part), { recursive: true });
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
      await cp(found, join(dir, relative(root, found)), { recursive: true, dereference: true });
      await copyDependencies(found);
    }
  };
  await copyDependencies(root);
  await readableByAll(dir);
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
