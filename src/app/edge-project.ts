import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CitiesApiError } from '../core/errors.js';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import type { EdgeProjectData } from '../http/edge-site.js';
import { specOf } from '../site/manifest.js';
import { readManifestHead } from '../store/manifest-file.js';
import { fileSystemError } from '../fs/fs-error.js';
import { writeOwnedFiles, type OwnedFile } from '../fs/owned-files.js';
import { zipArchive } from './zip-file.js';
import { planAssets } from './cloudflare-assets.js';
import { checkNetlifyToml, netlifyToml } from './netlify-toml.js';

// `cities-api edge <platform>`: a ready-to-deploy project for a built site. Two kinds of files:
// the user's (the platform's config and a few-line entry module), written once when missing and never
// rewritten, so a Worker's name, routes or a netlify.toml's [build.environment] survive every rerun;
// and cities-api's, rewritten by each run (only if nobody changed them since): the edge bundle
// (lib/edge/cities-api-edge.js, built with the package), the site's settings as a module
// (cities-site.js: a few hundred bytes at any size of site), which the entry imports, and what
// the platform needs from the site (Cloudflare's .assetsignore, Lambda's zip). No generated file
// holds a path of the building machine: the site is named relative to the project.

export const PLATFORMS = ['cloudflare', 'deno', 'netlify', 'lambda'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Found the same way from src/app (tests) and lib/app (the package). */
const BUNDLE = fileURLToPath(new URL('../../lib/edge/cities-api-edge.js', import.meta.url));
const BUNDLE_NAME = 'cities-api-edge.js';
const DATA_NAME = 'cities-site.js';
/** Netlify's edge function, a folder of netlify/edge-functions (its default directory). */
export const NETLIFY_EDGE_DIR = 'netlify/edge-functions/cities-api';
/** Beside the project's files: which of them `edge` wrote, so a new run replaces those and nothing of the user's. */
export const OWNED_RECORD = '.cities-api-edge.json';
/** Workers' compatibility date: the runtime behaviour the Worker was tested with. */
const COMPATIBILITY_DATE = '2025-09-01';

export interface EdgeProject {
  readonly platform: Platform;
  readonly out: string;
  /** The files written, relative to `out` (or absolute when outside it). */
  readonly files: readonly string[];
  /** The user's files of the project, written only when missing (relative to `out`). */
  readonly userFiles: readonly string[];
  /** The one command that deploys it, run in `out`. */
  readonly deploy: string;
  readonly bundleBytes: number;
  /** What the platform's tools will complain of in the site, and what to do. */
  readonly warnings: readonly string[];
}

interface ProjectFiles {
  /** cities-api's files: rewritten on every run. */
  readonly ours: OwnedFile[];
  /** The user's: written only where missing. */
  readonly theirs: { path: string; bytes: Uint8Array }[];
}

export async function writeEdgeProject(platform: Platform, site: string, out: string): Promise<EdgeProject> {
  const manifest = await readManifestHead(site);
  if (!manifest)
    throw new CitiesApiError(`${site} holds no cities-api site: run cities-api build first (or pass --site DIR)`, 1);
  const bundle = await readFile(BUNDLE).catch(() => {
    throw new CitiesApiError(`the edge bundle ${BUNDLE} is missing: in a checkout of cities-api, run npm run build`, 1);
  });
  const data: EdgeProjectData = { settings: manifest.settings };
  const spec = specOf(manifest);
  const endpoint = escapeUriPath(endpointPath(spec.mount));
  // Every file is decided first, then written only if none would replace a file the user owns.
  const projectFiles: ProjectFiles = { ours: [], theirs: [] };
  const ours = (path: string, bytes: string | Uint8Array) =>
    projectFiles.ours.push({ path, bytes: typeof bytes === 'string' ? Buffer.from(bytes) : bytes });
  const theirs = (path: string, text: string) => projectFiles.theirs.push({ path, bytes: Buffer.from(text) });
  const code = (dir: string) => {
    const siteDir = `${posixRelative(dir, site)}/`;
    ours(join(dir, BUNDLE_NAME), bundle);
    ours(join(dir, DATA_NAME), settingsModule(data, siteDir));
    return siteDir;
  };
  let deploy: string;
  let warnings: readonly string[] = [];
  switch (platform) {
    case 'cloudflare': {
      // First: a site that cannot take it fails the run before any file of the project is written.
      const plan = await planAssets(site);
      ours(join(site, '.assetsignore'), plan.ignore);
      warnings = plan.warnings;
      code(out);
      theirs(join(out, 'worker.js'), entryModule('cloudflareWorker', 'export default cloudflareWorker(site);\n'));
      theirs(join(out, 'wrangler.jsonc'), wranglerConfig(posixRelative(out, site), endpoint));
      deploy = 'npx wrangler deploy';
      break;
    }
    case 'deno': {
      // The site's directory as the project sees it: Deno Deploy must upload both (see docs/deno.md).
      const files = code(out);
      const main = `const files = new URL(siteDir, import.meta.url);\nexport default denoServer(site, Deno, files);\n`;
      theirs(join(out, 'main.js'), entryModule('denoServer', main, ', { siteDir }'));
      deploy = `deno serve --allow-read=${shellWord(files)} main.js`;
      break;
    }
    case 'lambda': {
      // The zip holds the entry (the user's, as it stands), the site's edge files at their site paths beside it.
      code(out);
      const main = `${entryModule('lambdaHandler', 'export const handler = lambdaHandler(site, (path) => readFile(new URL(path, import.meta.url)));\n', '', "import { readFile } from 'node:fs/promises';\n")}`;
      theirs(join(out, 'index.mjs'), main);
      const entry = await readFile(join(out, 'index.mjs')).catch(() => Buffer.from(main));
      const zip = zipArchive([
        { name: 'index.mjs', bytes: entry },
        { name: BUNDLE_NAME, bytes: bundle },
        { name: DATA_NAME, bytes: projectFiles.ours.find((f) => f.path.endsWith(DATA_NAME))!.bytes },
        ...(await edgeDataFiles(site)),
        // Answered at /openapi.json, as the static hosts answer it.
        { name: ROUTES.extras.openapi, bytes: await readFile(join(site, ROUTES.extras.openapi)) },
      ]);
      ours(join(out, 'function.zip'), zip);
      deploy = 'aws lambda update-function-code --function-name cities-api --zip-file fileb://function.zip';
      break;
    }
    case 'netlify': {
      const publish = posixRelative(out, site);
      if (publish.startsWith('..'))
        throw new CitiesApiError(
          `Netlify publishes a directory inside its project, and ${site} is not inside ${out}: pass --out a directory holding the site (e.g. --out .)`,
          2,
        );
      const dir = join(out, NETLIFY_EDGE_DIR);
      code(dir);
      const main = 'export default netlifyEdgeFunction(site);\nexport const config = netlifyEdgeConfig(site);\n';
      theirs(join(dir, 'cities-api.mjs'), entryModule('netlifyEdgeConfig, netlifyEdgeFunction', main));
      theirs(join(out, 'netlify.toml'), netlifyToml(publish));
      await checkNetlifyToml(join(out, 'netlify.toml'), out, site);
      deploy = 'npx netlify deploy --prod';
      break;
    }
  }
  let created: ProjectFiles['theirs'] = [];
  await (async () => {
    const missing = await missingFiles(projectFiles.theirs.map((f) => f.path));
    created = projectFiles.theirs.filter((f) => missing.has(f.path));
    await writeOwnedFiles(out, OWNED_RECORD, 'cities-api edge', projectFiles.ours);
    for (const file of created) {
      await mkdir(dirname(file.path), { recursive: true });
      await writeFile(file.path, file.bytes, { flag: 'wx' });
    }
  })().catch(async (error: unknown) => {
    // A file of the site (.assetsignore) is the site directory's fault, not --out's.
    const path = (error as { path?: unknown } | null)?.path;
    const inSite = typeof path === 'string' && isInside(site, path);
    throw await fileSystemError(
      error,
      inSite ? { what: 'site directory', option: '--site' } : { what: 'edge project directory', option: '--out' },
      inSite ? site : out,
    );
  });
  const shown = (path: string) => (relative(out, path).startsWith('..') ? path : relative(out, path));
  return {
    platform,
    out,
    files: [...projectFiles.ours, ...created].map((f) => shown(f.path)),
    userFiles: projectFiles.theirs.map((f) => shown(f.path)),
    deploy,
    bundleBytes: bundle.length,
    warnings,
  };
}

/** The entry module a user owns: imports the adapter and the site's settings, a few lines for the platform. */
function entryModule(adapter: string, body: string, named = '', first = ''): string {
  return `// Written once by cities-api edge; yours to edit (it is never rewritten). It imports cities-api's files beside it.\n${first}import { ${adapter} } from './${BUNDLE_NAME}';\nimport site${named} from './${DATA_NAME}';\n\n${body}`;
}

/** cities-site.js: the site's settings, and where the site is relative to the module. */
function settingsModule(data: EdgeProjectData, siteDir: string): string {
  return `// Generated by cities-api edge (rewritten on every run): the settings of the site ${siteDir} (its cities are read from its ${ROUTES.edge.dir}/ files).\nexport const siteDir = ${JSON.stringify(siteDir)};\nexport default ${JSON.stringify(data)};\n`;
}

/** Which of `paths` do not exist; one that exists must be a file (or a link to one). */
async function missingFiles(paths: readonly string[]): Promise<Set<string>> {
  const missing = new Set<string>();
  for (const path of paths) {
    const stats = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (!stats) missing.add(path);
    else if (!stats.isFile())
      throw new CitiesApiError(`${path} is not a file: move it aside or delete it, then run again`, 2);
  }
  return missing;
}

/** The site's edge files (all of `_cities-api/edge/`, sorted), as zip entries at their site paths. */
async function edgeDataFiles(site: string): Promise<{ name: string; bytes: Uint8Array }[]> {
  const dir = join(site, ROUTES.edge.dir);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => {
    throw new CitiesApiError(
      `${dir} is missing: rebuild the site with this version of cities-api (it writes the edge data)`,
      1,
    );
  });
  const names = entries
    .filter((e) => e.isFile())
    .map((e) => posixRelative(site, join(e.parentPath, e.name)).replace(/^\.\//, ''))
    .sort();
  return Promise.all(names.map(async (name) => ({ name, bytes: await readFile(join(site, name)) })));
}

/** Whether `path` is `dir` or below it (a name such as `..draft` is below). */
function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function shellWord(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** wrangler.jsonc: the site as the Worker's assets, the Worker first for the endpoint (asset routing ignores the query). */
export function wranglerConfig(assets: string, endpoint: string): string {
  const config = {
    name: 'cities-api',
    main: 'worker.js',
    compatibility_date: COMPATIBILITY_DATE,
    assets: { directory: assets, binding: 'ASSETS', run_worker_first: [endpoint.slice(0, -1), `${endpoint}*`] },
  };
  return `// Written once by cities-api edge cloudflare; yours to edit (name, routes...: it is never rewritten). Deploy with npx wrangler deploy\n${JSON.stringify(config, null, 2)}\n`;
}

function posixRelative(from: string, to: string): string {
  const path = relative(from, to).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
}
