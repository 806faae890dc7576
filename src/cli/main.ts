import { ROUTES } from '../core/route-table.js';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { Command, CommanderError, Option } from 'commander';
import { build, type BuildPlan } from '../app/build.js';
import { VERSION } from '../site/version.js';
import { loadConfig, type ProjectConfig } from './config-file.js';
import { CitiesApiError } from '../core/errors.js';
import { progressLine } from './progress.js';
import { specOf } from '../site/manifest.js';
import { readManifestHead } from '../write/manifest-file.js';
import { nginxConfig } from '../hosts/nginx.js';
import { cloudFrontFunction } from '../hosts/cloudfront.js';
import { readDataset } from '../dataset/read-dataset.js';
import { serve } from '../app/serve.js';
import { DEFAULT_BASE_URL, DEFAULT_COLLATION, DEFAULT_DATA, DEFAULT_OUT, DEFAULT_PAGE_SIZES, normalizeBaseUrl, type SiteSpec, parseCollation, parseMaxFiles, parseMinFree, parseOrderings, parsePageSizes } from '../site/spec.js';
import { DEFAULT_MAX_FILES, formatBytes } from '../site/size.js';

export interface RunOptions {
  readonly rawArgs: readonly string[];
  readonly cwd?: string;
  readonly stdout?: Writable & { isTTY?: boolean };
  readonly stderr?: Writable & { isTTY?: boolean };
}

/** The spec of a built site (its live URL replaced when one is given), or a clear error when the directory holds none. */
async function builtSpec(site: string, liveUrl?: string): Promise<SiteSpec> {
  const manifest = await readManifestHead(site);
  if (!manifest) throw new CitiesApiError(`${site} holds no cities-api site: run cities-api build first (or pass --site DIR)`, 1);
  const spec = specOf(manifest);
  return liveUrl ? { ...spec, liveUrl } : spec;
}

function describePlan(plan: BuildPlan): string {
  if (plan.upToDate) return 'the site was built from this dataset with these settings and its files are as built: nothing to write (--force rewrites every file)';
  const compressed = plan.compressedBytes ? ` + about ${formatBytes(plan.compressedBytes)} of .gz/.br` : '';
  const building = `building ${plan.pages} pages (${plan.files} files, about ${formatBytes(plan.jsonBytes)} of JSON${compressed})`;
  const { check } = plan;
  if (check?.unverified) return `the site was built from this input, but there is no record of its files to check them by (a killed build, or a copied site): ${building}, reading the old files to reuse those intact`;
  if (check) return `the site was built from this input, but ${check.changed.length} of its files changed since (${listSome(check.changed)}): ${building}, rewriting those`;
  return building;
}

/** A few names of a list, and how many more. */
function listSome(names: readonly string[], most = 5): string {
  return names.slice(0, most).join(', ') + (names.length > most ? ` and ${names.length - most} more` : '');
}

/** Runs the command line and resolves to its exit code: 0 ok, 1 bad input, 2 bad usage. */
export async function runMain(options: RunOptions): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const say = (line: string) => void stdout.write(`${line}\n`);
  const program = new Command('cities-api')
    .description(`Build the paginated ${ROUTES.endpoint} API as static JSON files, and serve them.`)
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => void stdout.write(s), writeErr: (s) => void stderr.write(s) })
    .showHelpAfterError('(run with --help for usage)');
  const config = () => loadConfig(cwd);
  const dataOption = () => new Option('--data <file>', `dataset, .csv or .json (default: ${DEFAULT_DATA})`);

  program
    .command('build')
    .description(`write every precomputed page of ${ROUTES.endpoint} as JSON files`)
    .addOption(dataOption())
    .option('--out <dir>', `site directory (default: ${DEFAULT_OUT})`)
    .option('--base-url <url>', `URL the API is published at, used in next/previous links (default: ${DEFAULT_BASE_URL})`)
    .addOption(new Option('--collation <name>', `text order: ICU per language, or Unicode code point (default: ${DEFAULT_COLLATION})`).choices(['locale', 'codepoint']))
    .option('--page-sizes <list>', `page sizes to precompute (default: ${DEFAULT_PAGE_SIZES.join(',')})`)
    .option('--orderings <list>', 'orderings to precompute: all, or e.g. default,name_en,-name_en (default: all)')
    .option('--no-compress', 'do not write .gz/.br next to each page')
    .option('--live-url <url>', 'the live server static hosts send uncovered queries to (Netlify _redirects); default: none, they get a 404 saying so')
    .option('--max-files <n>', `refuse to build a site of more files than this (default: ${DEFAULT_MAX_FILES})`)
    .option('--min-free <size>', 'free space the build leaves on the site\'s filesystem, e.g. 500MB, 2GB, 0 (default: 5% of it, at most 1GB)')
    .option('--force', 'rewrite every file, reusing nothing of the old site (e.g. after a Node upgrade changed ICU collation)')
    .action(async (flags: { data?: string; out?: string; baseUrl?: string; collation?: string; pageSizes?: string; orderings?: string; compress: boolean; liveUrl?: string; maxFiles?: string; minFree?: string; force?: boolean }) => {
      const c: ProjectConfig = await config();
      const progress = progressLine(stderr, 'building pages');
      const data = resolve(cwd, flags.data ?? c.data ?? DEFAULT_DATA);
      const out = resolve(cwd, flags.out ?? c.out ?? DEFAULT_OUT);
      const result = await build({
        data,
        out,
        baseUrl: flags.baseUrl ?? c.baseUrl ?? DEFAULT_BASE_URL,
        collation: parseCollation(flags.collation ?? c.collation ?? DEFAULT_COLLATION),
        pageSizes: parsePageSizes(flags.pageSizes ?? c.pageSizes ?? DEFAULT_PAGE_SIZES),
        orderings: parseOrderings(flags.orderings ?? c.orderings ?? 'all'),
        compress: flags.compress,
        liveUrl: flags.liveUrl ?? c.liveUrl,
        maxFiles: parseMaxFiles(flags.maxFiles ?? c.maxFiles ?? DEFAULT_MAX_FILES),
        minFree: flags.minFree !== undefined || c.minFree !== undefined ? parseMinFree(flags.minFree ?? c.minFree!) : undefined,
        force: flags.force ?? false,
        cwd,
        onStart: (plan) => say(`${flags.data ?? c.data ?? DEFAULT_DATA}: ${plan.cities} cities valid; ${describePlan(plan)}`),
        onProgress: (done, total) => progress.update(done, total),
      }).finally(() => progress.end());
      const name = flags.out ?? c.out ?? DEFAULT_OUT;
      const where = result.dir === out ? '' : ` (→ ${result.dir})`;
      say(`built ${name}/${where}: ${result.files} files: ${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed in ${result.seconds.toFixed(2)} s`);
      if (result.leftover) say(`could not delete the previous site ${result.leftover}; it holds nothing the new site needs: delete it by hand (the next build tries again)`);
      if (result.kept.length) say(`kept ${result.kept.length} ${result.kept.length === 1 ? 'file' : 'files'} that ${result.kept.length === 1 ? 'is' : 'are'} not the site's: ${listSome(result.kept)}`);
    });

  program
    .command('validate')
    .description('check a dataset and list every problem, writing nothing')
    .addOption(dataOption())
    .action(async (flags: { data?: string }) => {
      const c = await config();
      const name = flags.data ?? c.data ?? DEFAULT_DATA;
      const { count } = await readDataset(resolve(cwd, name));
      say(`${name}: ${count} cities, valid`);
    });

  program
    .command('serve')
    .description('serve a site: static files first, everything else computed live')
    .argument('[dir]', `site directory (default: ${DEFAULT_OUT})`)
    .addOption(new Option('--data <file>', 'dataset to build DIR from before serving (default: the config\'s; else DIR is served as built)'))
    .option('--base-url <url>', 'URL the API is published at (default: the site\'s own, or this server\'s URL when building)')
    .addOption(new Option('--collation <name>', 'text order when building').choices(['locale', 'codepoint']))
    .option('--page-sizes <list>', 'page sizes to precompute when building')
    .option('--orderings <list>', 'orderings to precompute when building (all, or e.g. default,name_en)')
    .option('--port <number>', 'port to listen on (0: any free port)', '8080')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--writable', 'accept POST to create cities (clients send Authorization: Token $CITIES_API_TOKEN)')
    .option('--watch', 'rebuild and answer from the new data when the dataset file changes')
    .option('--failover-origin', 'also answer the site\'s file paths, as the origin a CDN fails over to when its copy lacks a file (see docs/cloudfront.md)')
    .action(async (dir: string | undefined, flags: { data?: string; baseUrl?: string; collation?: string; pageSizes?: string; orderings?: string; port: string; host: string; writable?: boolean; watch?: boolean; failoverOrigin?: boolean }) => {
      const c = await config();
      if (!/^\d+$/.test(flags.port) || Number(flags.port) > 65535) throw new CitiesApiError(`invalid port "${flags.port}": expected 0-65535`, 2);
      const data = flags.data ?? c.data;
      const server = await serve({
        dir: resolve(cwd, dir ?? c.out ?? DEFAULT_OUT),
        data: data === undefined ? undefined : resolve(cwd, data),
        baseUrl: flags.baseUrl ?? c.baseUrl,
        collation: flags.collation || c.collation ? parseCollation(flags.collation ?? c.collation!) : undefined,
        pageSizes: flags.pageSizes || c.pageSizes ? parsePageSizes(flags.pageSizes ?? c.pageSizes!) : undefined,
        orderings: flags.orderings || c.orderings ? parseOrderings(flags.orderings ?? c.orderings!) : undefined,
        port: Number(flags.port),
        host: flags.host,
        writable: flags.writable,
        token: process.env.CITIES_API_TOKEN,
        watch: flags.watch,
        failoverOrigin: flags.failoverOrigin,
        log: say,
      });
      await new Promise<void>((done) => {
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
      });
      await server.close();
      say('stopped');
    });

  const configCommand = program.command('config').description('print the configuration a host needs to serve a built site');
  configCommand
    .command('nginx')
    .description('location blocks to include in a server {} whose root is the site: files first, the live server for the rest')
    .option('--site <dir>', `built site directory (default: ${DEFAULT_OUT})`)
    .option('--live-url <url>', 'where cities-api serve listens', 'http://127.0.0.1:8080')
    .action(async (flags: { site?: string; liveUrl: string }) => {
      const c = await config();
      const site = resolve(cwd, flags.site ?? c.out ?? DEFAULT_OUT);
      stdout.write(nginxConfig(await builtSpec(site), { liveUrl: normalizeBaseUrl(flags.liveUrl), site }));
    });

  configCommand
    .command('cloudfront')
    .description('a CloudFront Function (viewer-request, cloudfront-js-2.0) mapping query strings to the site\'s S3 objects')
    .option('--site <dir>', `built site directory (default: ${DEFAULT_OUT})`)
    .option('--live-url <url>', 'origin for queries no file covers (a cities-api serve); default: the site\'s --live-url, else a 404 saying so')
    .action(async (flags: { site?: string; liveUrl?: string }) => {
      const c = await config();
      const site = resolve(cwd, flags.site ?? c.out ?? DEFAULT_OUT);
      stdout.write(cloudFrontFunction(await builtSpec(site, flags.liveUrl && normalizeBaseUrl(flags.liveUrl))));
    });

  try {
    await program.parseAsync([...options.rawArgs], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof CitiesApiError) {
      stderr.write(`cities-api: ${error.message}\n`);
      return error.exitCode;
    }
    stderr.write(`cities-api: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}
