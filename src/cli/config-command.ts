import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CitiesApiError } from '../core/errors.js';
import { fileSystemError } from '../fs/fs-error.js';
import type { SiteSpec } from '../site/spec.js';
import { tableCommand, type CommandContext } from './command.js';
import type { CommandName, OptionValues } from './option-spec.js';

type HostConfig = (o: Partial<OptionValues>, site: string) => Promise<string>;

/**
 * Each host's command: its name, its description, and what it prints for a site directory. What
 * prints it is loaded when the command runs, not at the CLI's start-up (which every command pays).
 */
const HOSTS: readonly (readonly [CommandName, string, HostConfig])[] = [
  [
    'config nginx',
    'location blocks to include in a server {} whose root is the site: files first, the live server for the rest',
    async (o, site) => {
      const { nginxConfig } = await import('../hosts/nginx.js');
      return nginxConfig(await builtSpec(site), { liveUrl: o.liveUrl!, site });
    },
  ],
  [
    'config cloudfront',
    "a CloudFront Function (viewer-request, cloudfront-js-2.0) mapping query strings to the site's S3 objects, or with --stack the CloudFormation template of the whole deployment",
    async (o, site) => {
      const spec = await builtSpec(site, o.liveUrl);
      if (o.stack) return (await import('../hosts/cloudfront-stack.js')).cloudFrontStack(spec);
      return (await import('../hosts/cloudfront.js')).cloudFrontFunction(spec);
    },
  ],
];

/** `cities-api config nginx|cloudfront`: what a host needs to serve a built site, on stdout. */
export function registerConfigCommand(program: Command, context: CommandContext): void {
  const config = program.command('config').description('print the configuration a host needs to serve a built site');
  for (const [name, description, render] of HOSTS) {
    const command = tableCommand(config, name, description, context);
    command.cmd.action(async () => {
      const { o } = await command.options();
      context.stdout.write(await render(o, resolve(context.cwd, o.site!)));
    });
  }
}

/** The spec of a built site (its live URL replaced when one is given), or a clear error when the directory holds none. */
async function builtSpec(site: string, liveUrl?: string): Promise<SiteSpec> {
  const [{ readManifestHead }, { specOf }] = await Promise.all([
    import('../store/manifest-file.js'),
    import('../site/manifest.js'),
  ]);
  const manifest = await readManifestHead(site).catch(async (error: unknown) => {
    throw await fileSystemError(error, { what: 'site directory', option: '--site' }, site);
  });
  if (!manifest)
    throw new CitiesApiError(`${site} holds no cities-api site: run cities-api build first (or pass --site DIR)`, 1);
  const spec = specOf(manifest);
  return liveUrl ? { ...spec, liveUrl } : spec;
}
