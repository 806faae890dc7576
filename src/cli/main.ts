import { ROUTES } from '../core/route-table.js';
import { relative, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { Command, CommanderError } from 'commander';
import { build, type BuildPlan } from '../app/build.js';
import { VERSION } from '../site/version.js';
import { CONFIG_FILE, loadConfig } from './config-file.js';
import { commanderOption, optionsOf, resolveOptions, type CommandName } from './options.js';
import { CitiesApiError, type Problem } from '../core/errors.js';
import { inGitHubActions, problemAnnotation, warningLine } from './annotations.js';
import { progressLine } from './progress.js';
import { registerEdgeCommand } from './edge-command.js';
import { specOf } from '../site/manifest.js';
import { readManifestHead } from '../store/manifest-file.js';
import { fileSystemError, isErrno } from '../fs/fs-error.js';
import { nginxConfig } from '../hosts/nginx.js';
import { cloudFrontFunction } from '../hosts/cloudfront.js';
import { readDataset } from '../dataset/read-dataset.js';
import { serve } from '../app/serve.js';
import { DEFAULT_BASE_URL, DEFAULT_OUT, type SiteSpec } from '../site/spec.js';
import { formatBytes } from '../site/size.js';

export interface RunOptions {
  readonly rawArgs: readonly string[];
  readonly cwd?: string;
  readonly stdout?: Writable & { isTTY?: boolean };
  readonly stderr?: Writable & { isTTY?: boolean };
}

/** The spec of a built site (its live URL replaced when one is given), or a clear error when the directory holds none. */
async function builtSpec(site: string, liveUrl?: string): Promise<SiteSpec> {
  const manifest = await readManifestHead(site).catch(async (error: unknown) => {
    throw await fileSystemError(error, { what: 'site directory', option: '--site' }, site);
  });
  if (!manifest)
    throw new CitiesApiError(`${site} holds no cities-api site: run cities-api build first (or pass --site DIR)`, 1);
  const spec = specOf(manifest);
  return liveUrl ? { ...spec, liveUrl } : spec;
}

function describePlan(plan: BuildPlan): string {
  if (plan.upToDate)
    return 'the site was built from this dataset with these settings and its files are as built: nothing to write (--force rewrites every file)';
  const compressed = plan.compressedBytes ? ` + about ${formatBytes(plan.compressedBytes)} of .gz/.br` : '';
  const building = `building ${plan.pages} pages (${plan.files} files, about ${formatBytes(plan.jsonBytes)} of JSON${compressed})`;
  const { check } = plan;
  if (check?.unverified)
    return `the site was built from this input, but there is no record of its files to check them by (a killed build, or a copied site): ${building}, reading the old files to reuse those intact`;
  if (check)
    return `the site was built from this input, but ${check.changed.length} of its files changed since (${listSome(check.changed)}): ${building}, rewriting those`;
  return building;
}

/** Said when a site is built without a base URL: in GitHub Actions as an annotation on the run. */
function defaultBaseUrlWarning(): string {
  return warningLine({
    reason: `no --base-url given: the site's next/previous links point at ${DEFAULT_BASE_URL}, which suits a local preview only; to deploy it, build with --base-url https://YOUR-HOST/PATH (or "baseUrl" in ${CONFIG_FILE})`,
  });
}

/** GitHub shows at most 10 error annotations per step (actions/toolkit docs/problem-matchers.md, "Limitations"): the rest are in the message. */
const MAX_ANNOTATIONS = 10;

/**
 * Ctrl-C (SIGINT) or SIGTERM while building: the first aborts the build (which removes what it
 * wrote), the next one is left to Node's default, which ends the process at once.
 */
function interruption(onInterrupt: () => void): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const handle = () => {
    dispose();
    onInterrupt();
    controller.abort();
  };
  const dispose = () => {
    for (const name of signals) process.off(name, handle);
  };
  for (const name of signals) process.on(name, handle);
  return { signal: controller.signal, dispose };
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
  /** Set once Ctrl-C stopped a build: the exit code is then 130, as a shell's. */
  let interrupted = false;
  const program = new Command('cities-api')
    .description(`Build the paginated ${ROUTES.endpoint} API as static JSON files, and serve them.`)
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => void stdout.write(s), writeErr: (s) => void stderr.write(s) })
    .showHelpAfterError('(run with --help for usage)');
  program.option('--config <file>', `config file (default: ${CONFIG_FILE} in the working directory, if there)`);
  /** Adds a command's options from the table; its action gets them resolved (flag, else config, else default). */
  const command = (parent: Command, name: CommandName, description: string) => {
    const cmd = parent.command(name.split(' ').at(-1)!).description(description);
    for (const option of optionsOf(name)) cmd.addOption(commanderOption(option, name));
    return {
      cmd,
      options: async () => {
        const config = await loadConfig(cwd, program.opts<{ config?: string }>().config);
        return {
          config,
          o: resolveOptions(
            name,
            { source: (a) => cmd.getOptionValueSource(a), value: (a) => cmd.getOptionValue(a) },
            config,
          ),
        };
      },
    };
  };
  /** A path as the user gave it (relative to the working directory when inside it), for messages. */
  const shown = (path: string) => (relative(cwd, path).startsWith('..') ? path : relative(cwd, path));
  /** The dataset's path, and how messages name it: as typed on the command line, else relative to the working directory when inside it. */
  const dataset = (cmd: Command, data: string) => {
    const path = resolve(cwd, data);
    return { path, name: cmd.getOptionValueSource('data') === 'cli' ? data : shown(path) };
  };
  const warn = (warning: Problem) => void stderr.write(`${warningLine(warning)}\n`);

  const buildCommand = command(program, 'build', `write every precomputed page of ${ROUTES.endpoint} as JSON files`);
  buildCommand.cmd.action(async () => {
    const { config, o } = await buildCommand.options();
    const given = (key: 'baseUrl' | 'compression') =>
      buildCommand.cmd.getOptionValueSource(key) === 'cli' || config[key] !== undefined;
    const data = dataset(buildCommand.cmd, o.data!);
    const out = resolve(cwd, o.out!);
    const reading = progressLine(stderr, `reading ${data.name}`, { unit: 'bytes' });
    const progress = progressLine(stderr, 'building pages', { unit: 'pages' });
    const stop = interruption(() => {
      interrupted = true;
      reading.end();
      progress.end();
      stderr.write('cities-api: interrupted: stopping the build (Ctrl-C again to quit at once)\n');
    });
    const result = await build({
      data: data.path,
      dataName: data.name,
      strict: o.strict,
      onWarning: warn,
      out,
      baseUrl: given('baseUrl') ? o.baseUrl : undefined,
      collation: o.collation!,
      pageSizes: o.pageSizes!,
      orderings: o.orderings!,
      // Only as given: build() says when it contradicts --no-compress.
      compression: given('compression') ? o.compression : undefined,
      compress: o.compress!,
      liveUrl: o.liveUrl,
      maxFiles: o.maxFiles!,
      minFree: o.minFree,
      force: o.force ?? false,
      cwd,
      signal: stop.signal,
      onRead: (read, bytes) => reading.update(read, bytes),
      onStart: (plan) => {
        reading.end();
        say(`${data.name}: ${plan.cities} cities valid; ${describePlan(plan)}`);
        if (plan.defaultBaseUrl) stderr.write(`${defaultBaseUrlWarning()}\n`);
      },
      onProgress: (done, total) => progress.update(done, total),
    }).finally(() => {
      stop.dispose();
      reading.end();
      progress.end();
    });
    const where = result.dir === out ? '' : ` (→ ${result.dir})`;
    say(
      `built ${shown(out)}/${where}: ${result.files} files: ${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed in ${result.seconds.toFixed(2)} s`,
    );
    if (result.leftover)
      say(
        `could not delete the previous site ${result.leftover}; it holds nothing the new site needs: delete it by hand (the next build tries again)`,
      );
    if (result.kept.length)
      say(
        `kept ${result.kept.length} ${result.kept.length === 1 ? 'file' : 'files'} that ${result.kept.length === 1 ? 'is' : 'are'} not the site's: ${listSome(result.kept)}`,
      );
  });

  const validateCommand = command(program, 'validate', 'check a dataset and list every problem, writing nothing');
  validateCommand.cmd.action(async () => {
    const { o } = await validateCommand.options();
    const data = dataset(validateCommand.cmd, o.data!);
    const { count } = await readDataset(data.path, { shownAs: data.name, strict: o.strict, onWarning: warn });
    say(`${data.name}: ${count} cities, valid`);
  });

  const serveCommand = command(program, 'serve', 'serve a site: static files first, everything else computed live');
  serveCommand.cmd
    .argument('[dir]', 'site directory (default: the config\'s "out", else dist)')
    .action(async (dir: string | undefined) => {
      const { config, o } = await serveCommand.options();
      const data = o.data === undefined ? undefined : dataset(serveCommand.cmd, o.data);
      const server = await serve({
        dir: dir === undefined ? resolve(cwd, (config.out as string | undefined) ?? DEFAULT_OUT) : resolve(cwd, dir),
        data: data?.path,
        dataName: data?.name,
        strict: o.strict,
        onWarning: warn,
        baseUrl: o.baseUrl,
        collation: o.collation,
        pageSizes: o.pageSizes,
        orderings: o.orderings,
        port: o.port!,
        host: o.host!,
        writable: o.writable,
        token: process.env.CITIES_API_TOKEN,
        watch: o.watch,
        failoverOrigin: o.failoverOrigin,
        workers: o.workers,
        log: say,
        requestLog: o.quiet ? undefined : say,
        previewPages: o.previewPages,
      });
      await new Promise<void>((done) => {
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
      });
      await server.close();
      say('stopped');
    });

  const configCommand = program
    .command('config')
    .description('print the configuration a host needs to serve a built site');
  const nginxCommand = command(
    configCommand,
    'config nginx',
    'location blocks to include in a server {} whose root is the site: files first, the live server for the rest',
  );
  nginxCommand.cmd.action(async () => {
    const { o } = await nginxCommand.options();
    const site = resolve(cwd, o.out!);
    stdout.write(nginxConfig(await builtSpec(site), { liveUrl: o.liveUrl!, site }));
  });
  const cloudfrontCommand = command(
    configCommand,
    'config cloudfront',
    "a CloudFront Function (viewer-request, cloudfront-js-2.0) mapping query strings to the site's S3 objects",
  );
  cloudfrontCommand.cmd.action(async () => {
    const { o } = await cloudfrontCommand.options();
    stdout.write(cloudFrontFunction(await builtSpec(resolve(cwd, o.out!), o.liveUrl)));
  });

  registerEdgeCommand(
    command(
      program,
      'edge',
      'write a ready-to-deploy edge project (cloudflare, deno, netlify, lambda) answering what no file covers',
    ),
    { cwd, say, shown },
  );

  try {
    await program.parseAsync([...options.rawArgs], { from: 'user' });
    return 0;
  } catch (thrown) {
    if (thrown instanceof CommanderError) return thrown.exitCode === 0 ? 0 : 2;
    // An errno no step named more precisely: still one line with the path.
    const error = isErrno(thrown) ? await fileSystemError(thrown, { what: 'path' }) : thrown;
    if (error instanceof CitiesApiError) {
      stderr.write(`cities-api: ${error.message}\n`);
      if (inGitHubActions())
        for (const problem of error.problems.slice(0, MAX_ANNOTATIONS))
          stderr.write(`${problemAnnotation('error', problem, 'cities-api: invalid dataset')}\n`);
      return interrupted ? 130 : error.exitCode;
    }
    stderr.write(`cities-api: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}
