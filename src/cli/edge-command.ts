import { resolve } from 'node:path';
import type { Command } from 'commander';
import { PLATFORMS, type Platform } from '../platforms/recipe.js';
import { CitiesApiError } from '../core/errors.js';
import { tableCommand, type CommandContext } from './command.js';

// `cities-api edge <platform> [--site DIR] [--project DIR]`: writes a ready-to-deploy project of the
// live fallback for a built site (src/app/edge-project.ts) and prints the one command deploying it.

export function registerEdgeCommand(program: Command, context: CommandContext): void {
  const { cwd, say, shown, warn } = context;
  const command = tableCommand(
    program,
    'edge',
    'write a ready-to-deploy edge project (cloudflare, deno, netlify, lambda) answering what no file covers',
    context,
  );
  command.cmd.argument('<platform>', PLATFORMS.join(', ')).action(async (platform: string) => {
    if (!(PLATFORMS as readonly string[]).includes(platform))
      throw new CitiesApiError(`unknown platform "${platform}": expected one of ${PLATFORMS.join(', ')}`, 2);
    const { o } = await command.options();
    const out = resolve(cwd, o.project ?? `edge-${platform}`);
    // Loaded here, not at start-up: the platforms' recipes are for this command only.
    const { writeEdgeProject } = await import('../app/edge-project.js');
    const project = await writeEdgeProject(platform as Platform, resolve(cwd, o.site!), out);
    const where = shown(out) || '.';
    say(`wrote ${where}/ for ${platform}: ${project.files.join(', ')} (bundle ${project.bundleBytes} bytes)`);
    for (const reason of project.warnings) warn({ file: shown(resolve(cwd, o.site!)), reason });
    say(`deploy: ${where === '.' ? '' : `cd ${where} && `}${project.deploy}`);
  });
}
