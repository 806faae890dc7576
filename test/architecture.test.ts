import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The import rule of src/: folders are layers; a module imports only from its own folder or from
// a lower layer, never upwards or sideways, and no set of modules imports itself in a circle.

const SRC = resolve(import.meta.dirname, '../src');
/** Each folder's rank: imports go to a strictly lower rank (or the same folder). */
const LAYERS: Record<string, number> = {
  core: 0,
  post: 1,
  site: 1,
  fs: 2,
  hosts: 2,
  proc: 2,
  store: 3,
  dataset: 3,
  http: 4,
  platforms: 5,
  app: 6,
  cli: 7,
};
/** Layers that compute answers and configs from values alone: no file system, no network. */
const PURE = ['core', 'post', 'site', 'hosts'];
const IO_MODULES =
  /^(?:node:)?(?:fs|fs\/promises|http|https|http2|net|tls|dgram|child_process|worker_threads|cluster)$/;

const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.split('\\').join('/'))
  .sort();
const folderOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');
/** Every `import`/`export ... from` and `import()` of a module, with the module it names. */
const importsOf = (file: string) =>
  [
    ...readFileSync(join(SRC, file), 'utf8').matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\('([^']+)'\)/g,
    ),
  ].map((m) => m[1] ?? m[2]!);
const internal = (file: string, spec: string) =>
  spec.startsWith('.') ? relative(SRC, resolve(SRC, dirname(file), spec)).replace(/\.js$/, '.ts') : null;
const edges = files.flatMap((file) => importsOf(file).map((spec) => ({ file, spec, target: internal(file, spec) })));

describe('src/ is layered', () => {
  it('every module lives in a layer folder (the package entry index.ts aside)', () => {
    expect(files.filter((f) => (folderOf(f) === '.' ? f !== 'index.ts' : !(folderOf(f) in LAYERS)))).toEqual([]);
  });

  it.each(Object.keys(LAYERS))('%s imports only from its own folder and lower layers', (layer) => {
    const upward = edges.filter(
      (e) =>
        folderOf(e.file) === layer &&
        e.target &&
        folderOf(e.target) !== layer &&
        !(LAYERS[folderOf(e.target)]! < LAYERS[layer]!),
    );
    expect(upward.map((e) => `${e.file} -> ${e.target}`)).toEqual([]);
  });

  it.each(PURE)('%s imports no file system or network module', (layer) => {
    const io = edges.filter((e) => folderOf(e.file) === layer && IO_MODULES.test(e.spec));
    expect(io.map((e) => `${e.file} -> ${e.spec}`)).toEqual([]);
  });

  // The edge bundle (every src/platforms/<platform>/adapter.ts, bundled by scripts/bundle-edge.mjs) runs
  // on workerd and Deno: everything it reaches is web-standard, with no Node module and no global
  // Buffer, and none of the recipes (Node code: they would only make the bundle larger).
  const adapters = files.filter((f) => /^platforms\/[^/]+\/adapter\.ts$/.test(f));
  it('what the edge handler reaches uses no Node API (no node: import, no package, no global Buffer)', () => {
    const roots = ['http/fetch-handler.ts', 'http/embedded-site.ts', ...adapters];
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const e of edges) if (e.file === file && e.target) visit(e.target);
    };
    roots.forEach(visit);
    expect(reached.has('core/page.ts') && reached.has('http/route.ts')).toBe(true);
    const external = edges.filter((e) => reached.has(e.file) && !e.target);
    const buffer = [...reached].filter((f) =>
      /\bBuffer\b/.test(readFileSync(join(SRC, f), 'utf8').replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '')),
    );
    expect([...external.map((e) => `${e.file} -> ${e.spec}`), ...buffer.map((f) => `${f} uses Buffer`)]).toEqual([]);
    expect([...reached].filter((f) => /^platforms\/(?:.*\/)?recipes?\.ts$/.test(f))).toEqual([]);
  });

  it('each folder of platforms/ is a platform: its adapter, its recipe, and a line of the registry', () => {
    const folders = [...new Set(files.filter((f) => /^platforms\/[^/]+\//.test(f)).map((f) => f.split('/')[1]!))];
    const registry = readFileSync(join(SRC, 'platforms/recipes.ts'), 'utf8');
    expect(folders.length).toBeGreaterThanOrEqual(4);
    expect(
      folders.filter(
        (p) =>
          !files.includes(`platforms/${p}/adapter.ts`) ||
          !files.includes(`platforms/${p}/recipe.ts`) ||
          !new RegExp(`^  ${p}: \\w+Recipe,$`, 'm').test(registry),
      ),
    ).toEqual([]);
  });

  it('no module imports itself through others (no cycle)', () => {
    expect(
      cyclesOf(new Map(files.map((f) => [f, edges.filter((e) => e.file === f && e.target).map((e) => e.target!)]))),
    ).toEqual([]);
  });

  it('the checks see violations: an upward import, an I/O import and a cycle in made-up modules', () => {
    const made = [
      { file: 'core/a.ts', spec: '../http/route.js' },
      { file: 'site/b.ts', spec: 'node:fs/promises' },
    ].map((e) => ({ ...e, target: internal(e.file, e.spec) }));
    expect(made.map((e) => [e.target, e.target && LAYERS[folderOf(e.target)]! < LAYERS[folderOf(e.file)]!])).toEqual([
      ['http/route.ts', false],
      [null, null],
    ]);
    expect(IO_MODULES.test(made[1]!.spec) && IO_MODULES.test('http') && !IO_MODULES.test('node:path')).toBe(true);
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual(['a -> b -> c -> a']);
    expect(importsOf('http/create-answer.ts')).toContain('../post/city-store.js');
  });
});

describe("the package's runtime dependencies are what src/ imports, each for a job node: does not do", () => {
  const declared = Object.keys(
    (JSON.parse(readFileSync(join(SRC, '../package.json'), 'utf8')) as { dependencies?: object }).dependencies ?? {},
  ).sort();
  /** A package an import names (its scope kept); `cloudfront` is the CloudFront Function's own import, in a string of hosts/cloudfront.ts. */
  const packageOf = (spec: string) =>
    spec
      .split('/')
      .slice(0, spec.startsWith('@') ? 2 : 1)
      .join('/');
  const imported = [
    ...new Set(
      edges
        .filter((e) => !e.target && !e.spec.startsWith('node:') && e.spec !== 'cloudfront')
        .map((e) => packageOf(e.spec)),
    ),
  ].sort();

  // A new runtime dependency goes in this table with what it does that node: cannot: every user installs it.
  it.each([
    ['commander', 'the command line: options, commands, --help'],
    ['csv-parse', 'CSV datasets read as RFC 4180 and streamed'],
    ['sirv', "the site's files served: ranges, ETags, precompressed variants"],
  ])('%s is a runtime dependency, imported by src/ (%s)', (name) => {
    expect(declared).toContain(name);
    expect(imported).toContain(name);
  });

  it('there are no others: a directory listed is node:fs readdir, not a glob package', () => {
    expect(declared).toEqual(['commander', 'csv-parse', 'sirv']);
    expect(imported).toEqual(declared);
  });
});

/** Each cycle of a graph of modules, as `a -> b -> a`. */
function cyclesOf(next: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') return void cycles.push([...path.slice(path.indexOf(node)), node].join(' -> '));
    state.set(node, 'open');
    for (const target of next.get(node) ?? []) visit(target, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of next.keys()) visit(node, []);
  return cycles;
}
