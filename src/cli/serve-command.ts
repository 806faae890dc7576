import { resolve } from 'node:path';
import type { Command } from 'commander';
import { serve } from '../app/serve.js';
import { DEFAULT_OUT } from '../site/spec.js';
import { tableCommand, type CommandContext } from './command.js';

/** `cities-api serve [dir]`: a site served until SIGINT or SIGTERM. */
export function registerServeCommand(program: Command, context: CommandContext): void {
  const { cwd, say } = context;
  const command = tableCommand(
    program,
    'serve',
    'serve a site: static files first, everything else computed live',
    context,
  );
  command.cmd
    .argument('[dir]', 'site directory (default: the config\'s "out", else dist)')
    .action(async (dir: string | undefined) => {
      const { config, o } = await command.options();
      const server = await serve({
        dir: dir === undefined ? resolve(cwd, (config.out as string | undefined) ?? DEFAULT_OUT) : resolve(cwd, dir),
        data: o.data === undefined ? undefined : resolve(cwd, o.data),
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
}
