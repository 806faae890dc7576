import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableCommand, type CommandContext } from '../src/cli/command.js';
import type { CommandName, OptionValues } from '../src/cli/option-spec.js';
import { OPTIONS } from '../src/cli/options.js';
import { cli } from './cli-helpers.js';
import { tempDir } from './helpers.js';

// One option, several spellings: the site directory is --site everywhere; build's --out, serve's
// positional [dir] and the config key "out" are its older spellings, and edge's --out the older
// spelling of --project. Each alias must resolve to exactly the options its current spelling
// gives; two spellings of one option together are refused (exit 2).

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-aliases-'));
  await mkdir(join(root, 'conf'));
  await writeFile(join(root, 'conf/site.json'), '{"site": "from-config"}');
  await writeFile(join(root, 'conf/out.json'), '{"out": "from-config"}');
  await writeFile(join(root, 'conf/both.json'), '{"out": "a", "site": "b"}');
});
afterAll(() => cleanup());

/** The options `command` resolves from `args` (commander and the option table, as the CLI parses them), nothing run. */
async function parsed(command: CommandName, args: string[], config?: string): Promise<Partial<OptionValues>> {
  const context = { cwd: root, configFile: () => config } as unknown as CommandContext;
  const program = new Command('cities-api').exitOverride();
  const table = tableCommand(program, command, '', context);
  let options: Partial<OptionValues> | undefined;
  table.cmd.action(async () => {
    options = (await table.options()).o;
  });
  if (command === 'edge') table.cmd.argument('<platform>');
  await program.parseAsync([...command.split(' '), ...(command === 'edge' ? ['deno'] : []), ...args], {
    from: 'user',
  });
  return options!;
}

const SPELLINGS: readonly (readonly [CommandName, string[], string[], string?])[] = [
  ['build', ['--out', 'public'], ['--site', 'public']],
  ['serve', ['public'], ['--site', 'public']],
  ['serve', ['public', '--port', '0'], ['--port', '0', '--site', 'public']],
  ['edge', ['--out', 'edge-here'], ['--project', 'edge-here']],
  ['edge', ['--site', 'dist', '--out', '.'], ['--site', 'dist', '--project', '.']],
  ['build', [], [], 'conf/out.json'],
];

describe('every alias gives the options its current spelling gives', () => {
  it.each(SPELLINGS)('%s %j is %s %j', async (...spelling) => {
    const [command, alias, current, config] = spelling as unknown as (typeof SPELLINGS)[number];
    const older = await parsed(command, alias, config);
    const newer = await parsed(command, current, config === 'conf/out.json' ? 'conf/site.json' : config);
    expect(older).toEqual(newer);
    // Not a default: what was given.
    expect(JSON.stringify(older)).toMatch(/public|edge-here|"project":"\."|from-config/);
  });

  it('the cases cover every alias of the table, flags, arguments and config keys', () => {
    const covered = new Set(
      SPELLINGS.flatMap(([command, alias, , config]) => [
        ...alias.filter((a) => a.startsWith('--')).map((a) => `${command} ${a}`),
        ...(alias[0] && !alias[0].startsWith('--') ? [`${command} [dir]`] : []),
        ...(config ? ['config out'] : []),
      ]),
    );
    const aliases = OPTIONS.flatMap((o) => [
      ...(o.aliases ?? []).flatMap((a) => o.commands.map((c) => `${c} ${a.split(' ')[0]}`)),
      ...(o.configAliases ?? []).map((k) => `config ${k}`),
    ]);
    expect(aliases.length).toBeGreaterThan(3);
    expect(aliases.filter((a) => !covered.has(a))).toEqual([]);
  });

  it('--help lists each alias as one', async () => {
    const help = async (...command: string[]) => (await cli(root, ...command, '--help')).stdout;
    expect(await help('build')).toMatch(/--out <dir>\s+alias of --site\n/);
    expect(await help('serve')).toMatch(/dir\s+alias of --site\n/);
    expect(await help('edge')).toMatch(/--out <dir>\s+alias of --project\n/);
  });
});

describe('two spellings of one option together: exit 2, naming both', () => {
  it.each([
    [
      'build --site and --out',
      ['build', '--site', 'a', '--out', 'b'],
      /^cities-api: --site and --out give the same option \(--out: older spelling of --site\): give it once\n/,
    ],
    [
      'build, the same directory twice',
      ['build', '--site', 'a', '--out', 'a'],
      /--site and --out give the same option/,
    ],
    [
      'serve DIR --site DIR',
      ['serve', 'a', '--site', 'b', '--port', '0'],
      /^cities-api: --site and \[dir\] give the same option \(\[dir\]: older spelling of --site\): give it once\n/,
    ],
    [
      'edge --project and --out',
      ['edge', 'deno', '--project', 'a', '--out', 'b'],
      /^cities-api: --project and --out give the same option/,
    ],
    [
      '"out" and "site" in one config file',
      ['--config', 'conf/both.json', 'build'],
      /conf\/both\.json: settings "out" and "site" are the same \("out" is its older name\): keep "site" only\n/,
    ],
  ])('%s', async (_name, args, message) => {
    const run = await cli(root, ...args);
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(message) });
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
