import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');

/**
 * The environment of a user's shell: none of the npm_* variables `npm test` exports (they would
 * point npm and npx at this repository), and npx never downloads a package that is not
 * installed (a missing bin fails instead of fetching whatever the registry holds under its name).
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
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`no URL printed within 120 s by: ${command}\n${output}`));
    }, 120_000);
    child.stdout.on('data', () => {
      const m = /serving .* at (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before serving: ${command}\n${output}`));
    });
  });
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
