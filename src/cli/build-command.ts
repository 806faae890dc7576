import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { BuildPlan } from '../app/build.js';
import { ROUTES } from '../core/route-table.js';
import { formatBytes } from '../site/size.js';
import { DEFAULT_BASE_URL } from '../site/spec.js';
import { datasetOf, tableCommand, type CommandContext } from './command.js';
import { CONFIG_FILE } from './config-file.js';
import { buildProgress } from './progress.js';
import { warningLine } from './annotations.js';
import { interruption } from './interruption.js';

/** `cities-api build`: the site written, with a progress line on stderr and what was done on stdout. */
export function registerBuildCommand(program: Command, context: CommandContext): void {
  const { cwd, stderr, say, shown } = context;
  const command = tableCommand(
    program,
    'build',
    `write every precomputed page of ${ROUTES.endpoint} as JSON files`,
    context,
  );
  command.cmd.action(async () => {
    const { config, o } = await command.options();
    const given = (key: 'baseUrl' | 'compression') =>
      command.cmd.getOptionValueSource(key) === 'cli' || config[key] !== undefined;
    const data = datasetOf(command, o.data!, context);
    const out = resolve(cwd, o.site!);
    const progress = buildProgress(stderr, data.name);
    const stop = interruption(() => {
      context.onInterrupt();
      progress.end();
      stderr.write('cities-api: interrupted: stopping the build (Ctrl-C again to quit at once)\n');
    });
    // Loaded here, not at start-up: a command line that builds nothing (--help, validate, config) runs without it.
    const { buildForCli } = await import('../app/build.js');
    const result = await buildForCli({
      data: data.path,
      dataName: data.name,
      strict: o.strict,
      onWarning: context.warn,
      log: say,
      out,
      baseUrl: given('baseUrl') ? o.baseUrl : undefined,
      collation: o.collation!,
      pageSizes: o.pageSizes!,
      orderings: o.orderings!,
      // Only as given: build() says when it contradicts --no-compress.
      compression: given('compression') ? o.compression : undefined,
      compress: o.compress!,
      liveUrl: o.liveUrl,
      host: o.builtFor,
      maxFiles: o.maxFiles!,
      minFree: o.minFree,
      lockWait: o.lockWait! * 1000,
      force: o.force ?? false,
      durable: o.durable ?? false,
      cwd,
      signal: stop.signal,
      onRead: progress.onRead,
      onStart: (plan) => {
        progress.readDone();
        say(`${data.name}: ${plan.cities} cities valid; ${describePlan(plan)}`);
        if (plan.defaultBaseUrl) stderr.write(`${defaultBaseUrlWarning()}\n`);
      },
      onProgress: progress.onProgress,
    }).finally(() => {
      stop.dispose();
      progress.end();
    });
    const where = result.dir === out ? '' : ` (→ ${result.dir})`;
    say(
      `built ${shown(out)}/${where}: ${result.files} files: ${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed in ${result.seconds.toFixed(2)} s`,
    );
    if (result.stranded?.length)
      say(
        `kept the previous site ${result.leftover}: it holds ${listSome(result.stranded)}, put in the site directory while the build ran where the new site has its own; move what you need out of it, then delete it`,
      );
    else if (result.leftover)
      say(
        `could not delete the previous site ${result.leftover}; it holds nothing the new site needs: delete it by hand (the next build tries again)`,
      );
    if (result.kept.length)
      say(
        `kept ${result.kept.length} ${result.kept.length === 1 ? 'file' : 'files'} that ${result.kept.length === 1 ? 'is' : 'are'} not the site's: ${listSome(result.kept)}`,
      );
  });
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

/** A few names of a list, and how many more. */
function listSome(names: readonly string[], most = 5): string {
  return names.slice(0, most).join(', ') + (names.length > most ? ` and ${names.length - most} more` : '');
}
