import { execFile, spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { printed } from './started-process.js';

export const ROOT = join(import.meta.dirname, '..');

/** The first executable `name` on this process's PATH: the real one a stand-in is put in front of. */
export function onPath(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      /* not here */
    }
  }
  throw new Error(`no ${name} on PATH`);
}

export const quoted = (path: string) => `'${path.replace(/'/g, `'\\''`)}'`;

/**
 * `npx` in `dir`, in front of the real one: a bin the project has installed (node_modules/.bin,
 * the nearest directory first) runs as npx runs it, that directory on PATH, but without npm's
 * start-up (1.3 of the 1.5 CPU-s an `npx cities-api --help` takes here; the package test runs
 * dozens); anything else (an option first, a package not installed) is the real npx's. The real
 * npx finding the installed cities-api is checked once in package.test.
 */
export function writeNpx(dir: string): void {
  const npx = join(dir, 'npx');
  const real = quoted(onPath('npx'));
  writeFileSync(
    npx,
    [
      '#!/bin/sh',
      `case "$1" in -*|"") exec ${real} "$@";; esac`,
      'dir=$PWD',
      'while :; do',
      '  if [ -x "$dir/node_modules/.bin/$1" ]; then',
      '    bin="$dir/node_modules/.bin/$1"; shift',
      '    PATH="$dir/node_modules/.bin:$PATH" exec "$bin" "$@"',
      '  fi',
      '  [ "$dir" = / ] && break',
      '  dir=$(dirname "$dir")',
      'done',
      `exec ${real} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(npx, 0o755);
}

/** The directory of the npx stand-in (writeNpx): one per user, written again (whole, by a rename) by each process that uses it. */
let npxDir: string | undefined;
function npxStandIn(): string {
  if (npxDir) return npxDir;
  const dir = join(tmpdir(), `cities-api-npx-${process.getuid?.() ?? 0}`);
  const staged = mkdtempSync(`${dir}-`);
  writeNpx(staged);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const made = lstatSync(dir);
  if (!made.isDirectory() || made.uid !== process.getuid?.())
    throw new Error(`${dir} is not a directory of this user's`);
  renameSync(join(staged, 'npx'), join(dir, 'npx'));
  rmSync(staged, { recursive: true, force: true });
  npxDir = dir;
  return dir;
}

/**
 * The environment of a user's shell: none of the npm_* variables `npm test` exports (they would
 * point npm and npx at this repository), and npx never downloads a package that is not
 * installed (a missing bin fails instead of fetching whatever the registry holds under its name);
 * `npx` of an installed bin is the stand-in of writeNpx.
 */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== 'INIT_CWD'),
  );
  return {
    ...env,
    npm_config_yes: 'false',
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    PATH: `${npxStandIn()}${delimiter}${process.env.PATH}`,
    ...extra,
  };
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end; never rejects, the exit code tells. */
export function run(
  file: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = userEnv(),
): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A long-running command started by bash in its own process group, until it prints its URL; stop() signals the group and waits for all of it. */
export async function startUntilUrl(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv = userEnv(),
): Promise<{ url: string; output: () => string; stop: () => Promise<number | null> }> {
  const child = spawn('bash', ['-eo', 'pipefail', '-c', command], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  // 'close': every process holding the output pipes has ended, the server started by npx included.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stop = async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* the group has ended */
    }
    return exited;
  };
  const url = await printed({ child, name: command, output: () => output, stop }, /serving .* at (http:\/\/\S+)/);
  return { url, output: () => output, stop };
}

/** The paths `npm pack` puts in the tarball, as the working tree stands (no build run). */
export async function packedPaths(dir = ROOT): Promise<string[]> {
  const { code, stdout, stderr } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], dir);
  if (code !== 0) throw new Error(`npm pack --dry-run failed: ${stderr}`);
  return (JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
}

/** The Markdown files that ship (README.md, docs/*.md, data/README.md), among `packed` (packedPaths(), asked once). */
export async function shippedMarkdown(packed?: readonly string[]): Promise<{ path: string; text: string }[]> {
  const paths = (packed ?? (await packedPaths())).filter((p) => p.endsWith('.md')).sort();
  return Promise.all(paths.map(async (path) => ({ path, text: await readFile(join(ROOT, path), 'utf8') })));
}
