import { copyFile, mkdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staleReason } from './build-on-demand.js';
import { tempDir } from './helpers.js';
import { ROOT, run } from './package-helpers.js';

// `npm run build` is the one build: a developer's run of it leaves lib/ current for the test tiers'
// build on demand (no second build at the next vitest run), a failed one leaves it stale, and the
// package never holds the stamp. Run in a copy of the build (package.json, scripts/, tsconfig.json with no @types)
// with a source tree of one module, so that the package's build takes seconds, not the project's 20 CPU-s.

const BUILD_FILES = ['package.json', 'scripts/build-lib.mjs', 'scripts/bundle-edge.mjs', 'tsconfig.json'];

let work: Awaited<ReturnType<typeof tempDir>>;
const seen: Record<string, unknown> = {};

async function copyOfTheBuild(dir: string): Promise<void> {
  for (const file of BUILD_FILES) {
    await mkdir(join(dir, file, '..'), { recursive: true });
    await copyFile(join(ROOT, file), join(dir, file));
  }
  // The one module uses no Node API: the copy's tsconfig.json loads no @types (types: []), so that
  // each package build (tsc) parses that module and TypeScript's lib, not @types/node too (3.4 -> 1.9 CPU-s a build).
  const config = JSON.parse(await readFile(join(dir, 'tsconfig.json'), 'utf8'));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ ...config, compilerOptions: { ...config.compilerOptions, types: [] } }, null, 2),
  );
  await mkdir(join(dir, 'src/platforms'), { recursive: true });
  await writeFile(join(dir, 'src/index.ts'), '/** One module. */\nexport const one: number = 1;\n');
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
}

const mtime = async (path: string) => (await stat(path)).mtimeMs;

beforeAll(async () => {
  work = await tempDir('cities-api-build-');
  const dir = work.dir;
  await copyOfTheBuild(dir);

  const before = Date.now();
  const build = await run('npm', ['run', 'build'], dir);
  seen.build = { code: build.code, stderr: build.stderr };
  seen.current = staleReason(dir);
  const [stamp, index] = [await mtime(join(dir, 'lib/.built')), await mtime(join(dir, 'lib/index.js'))];
  // Filesystem times may be rounded down to the second's tick: a little slack below.
  seen.stampDated = stamp >= before - 1000 && stamp <= index;

  const later = new Date(Date.now() + 5000);
  await utimes(join(dir, 'src/index.ts'), later, later);
  seen.edited = staleReason(dir);

  const pack = await run('npm', ['pack', '--dry-run', '--json'], dir);
  seen.packed = pack.code === 0 ? (JSON.parse(pack.stdout) as [{ files: { path: string }[] }])[0].files : pack.stderr;
  seen.packedDeclaration = await readFile(join(dir, 'lib/index.d.ts'), 'utf8');
  seen.packedCode = await readFile(join(dir, 'lib/index.js'), 'utf8');

  await writeFile(join(dir, 'src/index.ts'), 'export const one: number = "one";\n');
  const mistyped = await run('npm', ['run', 'build'], dir);
  seen.mistyped = { code: mistyped.code, reason: staleReason(dir) };
  const mistypedPack = await run('npm', ['pack', '--dry-run'], dir);
  seen.mistypedPack = { failed: mistypedPack.code !== 0, said: /TS2322/.test(mistypedPack.stdout) };

  await writeFile(join(dir, 'src/index.ts'), 'export const one: number = ;\n');
  const broken = await run('npm', ['run', 'build'], dir);
  seen.broken = { failed: broken.code !== 0, said: /Unexpected ";"/.test(broken.stderr), reason: staleReason(dir) };
}, 240_000);

afterAll(async () => {
  await work?.cleanup();
});

describe('npm run build (scripts/build-lib.mjs), read by the test tiers (test/build-on-demand.ts)', () => {
  it.each([
    ['the build succeeds', 'build', { code: 0, stderr: '' }],
    ['after it, lib/ is current: the next test run builds nothing', 'current', undefined],
    ['its stamp is dated when it began (at most: before the files it wrote)', 'stampDated', true],
    ['a source changed afterwards makes lib/ stale, named', 'edited', 'src/index.ts is newer than lib/'],
    [
      'npm pack ships lib/ without the stamp (prepack: the build for the package)',
      'packed',
      expect.not.arrayContaining([expect.objectContaining({ path: 'lib/.built' })]),
    ],
    ['the packed .js has no comments', 'packedCode', 'export const one = 1;\n'],
    ['the packed .d.ts has them', 'packedDeclaration', '/** One module. */\nexport declare const one: number;\n'],
    [
      'the development build does not check types (npm run typecheck does): a type error builds',
      'mistyped',
      { code: 0, reason: undefined },
    ],
    ['the package build checks them: a type error fails npm pack, named', 'mistypedPack', { failed: true, said: true }],
    [
      'a build that fails (a syntax error, named) leaves lib/ stale (no stamp)',
      'broken',
      { failed: true, said: true, reason: 'lib/ was never built here' },
    ],
  ])('%s', (_name, key, expected) => {
    expect(seen[key]).toEqual(expected);
  });

  it('npm pack ships what the build wrote (the stamp only left out)', () => {
    expect((seen.packed as { path: string }[]).map((f) => f.path).filter((p) => p.startsWith('lib/'))).toEqual([
      'lib/edge/cities-api-edge.js',
      'lib/index.d.ts',
      'lib/index.js',
    ]);
  });
});
