import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CitiesApiError } from '../core/errors.js';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import type { EdgeProjectData } from '../http/edge-site.js';
import { specOf } from '../site/manifest.js';
import { readManifestHead } from '../store/manifest-file.js';
import { fileSystemError } from '../fs/fs-error.js';
import { createAtomically, removeDeadDraftsOf, writeOwnedFiles } from '../fs/owned-files.js';
import { checkLimits, limitOf, type LimitOverrides } from '../platforms/limits.js';
import { BUNDLE_NAME, DATA_NAME, posixRelative, textFile, type ProjectFile } from '../platforms/recipe.js';
import { PLATFORMS, RECIPES, type Platform } from '../platforms/recipes.js';

// `cities-api edge <platform>`: a ready-to-deploy project for a built site, the same steps for every
// platform. The platform's recipe (src/platforms/<platform>/recipe.ts) decides the files; this
// driver gives it the edge bundle (lib/edge/cities-api-edge.js, built with the package) and the
// site's settings as a module (cities-site.js: a few hundred bytes at any size of site), then
// writes: cities-api's files over its own earlier ones only (never a file the user changed), the
// user's files only where missing, so a Worker's name, routes or a netlify.toml's
// [build.environment] survive every rerun. No generated file holds a path of the building machine:
// the site is named relative to the project.

export { PLATFORMS, type Platform };

/** Found the same way from src/app (tests) and lib/app (the package). */
const BUNDLE = fileURLToPath(new URL('../../lib/edge/cities-api-edge.js', import.meta.url));
/** Beside the project's files: which of them `edge` wrote, so a new run replaces those and nothing of the user's. */
export const OWNED_RECORD = '.cities-api-edge.json';

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

export interface EdgeProjectOptions {
  /** Figures replacing the platform's documented limits (tests: small sites over small limits). */
  readonly limits?: LimitOverrides;
}

export async function writeEdgeProject(
  platform: Platform,
  site: string,
  out: string,
  options: EdgeProjectOptions = {},
): Promise<EdgeProject> {
  const manifest = await readManifestHead(site);
  if (!manifest)
    throw new CitiesApiError(`${site} holds no cities-api site: run cities-api build first (or pass --site DIR)`, 1);
  const bundle = await readFile(BUNDLE).catch(() => {
    throw new CitiesApiError(`the edge bundle ${BUNDLE} is missing: in a checkout of cities-api, run npm run build`, 1);
  });
  const data: EdgeProjectData = { settings: manifest.settings };
  const endpoint = escapeUriPath(endpointPath(specOf(manifest).mount));
  // The site as the platform's tools find it from the project: from its real directory (a `cd`
  // through a link, or a module's URL, lands in the link's target, where `..` is the target's parent),
  // to the site's real parent (the site itself may be a link, followed at run time: `current -> v1`).
  const [realOut, realParent] = await Promise.all([realDirectory(out), realDirectory(dirname(site))]);
  const code = (dir: string) => {
    const path = posixRelative(join(realOut, relative(out, dir)), join(realParent, basename(site)));
    // The site itself is `./` (not `.//`: the printed --allow-read must read clean).
    const siteDir = path.endsWith('/') ? path : `${path}/`;
    const files = [
      { path: join(dir, BUNDLE_NAME), bytes: bundle },
      textFile(join(dir, DATA_NAME), settingsModule(data, siteDir)),
    ];
    return { siteDir, files };
  };
  // Every file is decided first, the site checked against the platform's limits as the recipe measures
  // it, then written only if none would replace a file the user owns.
  const recipe = RECIPES[platform];
  const plan = await recipe.project({
    site,
    out,
    endpoint,
    bundle,
    code,
    limit: (measure) => limitOf(recipe.limits, measure, options.limits),
    check: (measured) => checkLimits(recipe, measured, options.limits),
  });
  const created: ProjectFile[] = [];
  await (async () => {
    // Every path's, first: a killed run's draft of a file this run will not write (the user's now) would stay for good.
    await removeDeadDraftsOf([join(out, OWNED_RECORD), ...[...plan.ours, ...plan.theirs].map((f) => f.path)]);
    const missing = await missingFiles(plan.theirs.map((f) => f.path));
    await writeOwnedFiles(out, OWNED_RECORD, 'cities-api edge', plan.ours);
    // Each whole or not at all: a half-written one would be taken for the user's by the next run, and kept.
    for (const file of plan.theirs.filter((f) => missing.has(f.path))) {
      await mkdir(dirname(file.path), { recursive: true });
      if (await createAtomically(file.path, file.bytes)) created.push(file);
    }
  })().catch(async (error: unknown) => {
    // A file of the site (.assetsignore) is the site directory's fault, not --project's.
    const path = (error as { path?: unknown } | null)?.path;
    const inSite = typeof path === 'string' && isInside(site, path);
    throw await fileSystemError(
      error,
      inSite ? { what: 'site directory', option: '--site' } : { what: 'edge project directory', option: '--project' },
      inSite ? site : out,
    );
  });
  const shown = (path: string) => (relative(out, path).startsWith('..') ? path : relative(out, path));
  return {
    platform,
    out,
    files: [...plan.ours, ...created].map((f) => shown(f.path)),
    userFiles: plan.theirs.map((f) => shown(f.path)),
    deploy: plan.deploy,
    bundleBytes: bundle.length,
    warnings: plan.warnings ?? [],
  };
}

/** cities-site.js: the site's settings, and where the site is relative to the module. */
export function settingsModule(data: EdgeProjectData, siteDir: string): string {
  // The directory's name, in the comment and in the code, with no line end (JavaScript's four) left raw: one would end the comment.
  const said = escapeLineEnds(siteDir);
  return `// Generated by cities-api edge (rewritten on every run): the settings of the site ${said} (its cities are read from its ${ROUTES.edge.dir}/ files).\nexport const siteDir = ${escapeLineEnds(JSON.stringify(siteDir))};\nexport default ${escapeLineEnds(JSON.stringify(data))};\n`;
}

/** `text` with each JavaScript line end as a \uXXXX escape (JSON leaves U+2028 and U+2029 raw). */
function escapeLineEnds(text: string): string {
  return text.replace(/[\n\r\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `path` with its links resolved as far as it exists (a project directory may not exist yet). */
async function realDirectory(path: string): Promise<string> {
  const real = await realpath(path).catch(() => null);
  if (real !== null || dirname(path) === path) return real ?? path;
  return join(await realDirectory(dirname(path)), basename(path));
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

/** Whether `path` is `dir` or below it (a name such as `..draft` is below). */
function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
