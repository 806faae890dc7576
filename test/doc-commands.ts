import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shellCommands, splitCode } from './markdown.js';
import { ROOT } from './package-helpers.js';

// The commands the README and docs/ show a user, as the package test runs them.

export interface DocCommand {
  doc: string;
  command: string;
}

/** Every `npx cities-api` command the shipped docs show, in order: shell blocks and netlify.toml's build command. */
export async function documentedCommands(): Promise<{
  commands: DocCommand[];
  synopses: DocCommand[];
  stray: DocCommand[];
}> {
  const paths = [
    'README.md',
    ...(await readdir(join(ROOT, 'docs')))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  const commands: DocCommand[] = [];
  const synopses: DocCommand[] = [];
  const stray: DocCommand[] = [];
  for (const doc of paths) {
    for (const block of splitCode(await readFile(join(ROOT, doc), 'utf8')).blocks) {
      if (block.lang === 'yaml') continue; // the workflow: run below, step by step
      if (block.lang === 'toml') {
        for (const m of block.text.matchAll(/^\s*command\s*=\s*"(.*)"\s*$/gm)) commands.push({ doc, command: m[1]! });
        continue;
      }
      for (const command of shellCommands(block.text)) {
        if (command.startsWith('npx cities-api ')) commands.push({ doc, command });
        else if (command.startsWith('cities-api ')) synopses.push({ doc, command });
        else if (/\bnpx\s+cities-api\b/.test(command)) stray.push({ doc, command });
      }
    }
  }
  return { commands, synopses, stray };
}

/** A documented command as it runs in a sandbox: system paths moved into it, servers on a free port. */
export function sandboxed(command: string, root: string): string {
  let c = command.replace(/(^|[\s=>"'])\/(srv|etc)\//g, `$1${root}/$2/`);
  if (/^npx cities-api serve\b/.test(c))
    c = /--port \d+/.test(c) ? c.replace(/--port \d+/, '--port 0') : `${c} --port 0`;
  return c;
}
