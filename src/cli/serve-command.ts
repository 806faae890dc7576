import { resolve } from 'node:path';
import type { Command } from 'commander';
import { streamLog } from '../http/request-log.js';
import { buildProgress } from './progress.js';
import { datasetOf, tableCommand, type CommandContext } from './command.js';
import { interruption } from './interruption.js';

/** `cities-api serve [--site DIR]`: a site served until SIGINT or SIGTERM. */
export function registerServeCommand(program: Command, context: CommandContext): void {
  const { cwd, say, stdout, stderr } = context;
  const command = tableCommand(
    program,
    'serve',
    'serve a site: static files first, everything else computed live',
    context,
  );
  // The site directory comes with the options (--site, or the older positional [dir]).
  command.cmd.action(async () => {
    context.runsOn('the server goes on, logging nothing more (its requests, its builds, POSTs that failed)');
    const { o } = await command.options();
    const data = o.data === undefined ? undefined : datasetOf(command, o.data, context);
    // The first build (serve --data) shows its progress as build does; requests meanwhile get a 503.
    const progress = data && buildProgress(stderr, data.name);
    // Ctrl-C (or SIGTERM) stops the first build as build's does (minutes at 140,000 cities), and once it serves closes
    // the server. One handler from start to end: one removed and another added once serve() resolved lost a signal
    // that came in between (libuv had caught it, no listener was left to be told).
    let serving = false;
    let stopServing = () => {};
    const stopped = new Promise<void>((done) => (stopServing = done));
    const stop = interruption(() => {
      if (!serving) {
        context.onInterrupt();
        progress?.end();
        if (data) stderr.write('cities-api: interrupted: stopping the build (Ctrl-C again to quit at once)\n');
      }
      stopServing();
    });
    // Loaded here, not at start-up: the other commands run without the server.
    const { serveForCli } = await import('../app/serve.js');
    const server = await serveForCli({
      dir: resolve(cwd, o.site!),
      data: data?.path,
      dataName: data?.name,
      strict: o.strict,
      onWarning: context.warn,
      baseUrl: o.baseUrl,
      collation: o.collation,
      pageSizes: o.pageSizes,
      orderings: o.orderings,
      durable: o.durable,
      port: o.port!,
      host: o.host!,
      writable: o.writable,
      token: o.token,
      watch: o.watch,
      failoverOrigin: o.failoverOrigin,
      workers: o.workers,
      lockWait: o.lockWait! * 1000,
      log: say,
      requestLog: o.quiet ? undefined : streamLog(stdout),
      previewPages: o.previewPages,
      firstBuild: progress && {
        onRead: progress.onRead,
        onStart: (plan) => {
          progress.readDone();
          if (!plan.upToDate)
            say(
              `${data!.name}: ${plan.cities} cities valid; building ${plan.pages} pages before serving them (requests meanwhile: 503 with Retry-After)`,
            );
        },
        onProgress: progress.onProgress,
        signal: stop.signal,
      },
    })
      .catch((error: unknown) => {
        stop.dispose();
        throw error;
      })
      .finally(() => progress?.end());
    serving = true;
    // A signal that came while it started, and stopped no build (it had ended), stops it at once.
    await stopped;
    // Stopped even when the close refuses (logged cities not folded in): that refusal is then the exit's.
    try {
      await server.close();
    } finally {
      say('stopped');
    }
  });
}
