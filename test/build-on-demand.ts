import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { INPUTS, STAMP } from '../scripts/build-lib.mjs';

// vitest globalSetup of the integration and engines tiers: their tests run the compiled CLI and
// workers from lib/ and copy the edge bundle, so lib/ is rebuilt first whenever a source is newer
// than the last build (a changed, added or removed file under src/ changes its directory's time).
// `npm run build` (scripts/build-lib.mjs) stamps lib/ when it ends, dated when it began: after a
// developer's build, lib/ is current here too.

const ROOT = join(import.meta.dirname, '..');
const LOCK = join(ROOT, '.lib-build.lock');

/** The newest input of the build in `root` and its time (files and directories, recursively). */
export function newestInput(root = ROOT): { path: string; time: number } {
  let newest = { path: '', time: 0 };
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.mtimeMs > newest.time) newest = { path, time: stat.mtimeMs };
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  for (const input of INPUTS) visit(join(root, input));
  return newest;
}

/** Why lib/ in `root` must be built, or undefined when its stamp is as new as every input. */
export function staleReason(root = ROOT): string | undefined {
  let built: number;
  try {
    built = statSync(join(root, STAMP)).mtimeMs;
  } catch {
    return 'lib/ was never built here';
  }
  const { path, time } = newestInput(root);
  return time > built ? `${relative(root, path)} is newer than lib/` : undefined;
}

/** `npm run build` (scripts/build-lib.mjs, the one place that says how lib/ is made and stamped). */
function build(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`test setup: npm run build failed (exit ${code}):\n${output}`)),
    );
  });
}

/** Whether the process that holds `lock` is gone (killed mid-build): then its lock is void. */
function lockAbandoned(lock: string): boolean {
  try {
    process.kill(Number(readFileSync(lock, 'utf8')), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** `work` while this process holds the file `lock`: another process (a vitest run, a test file) waits for it. */
export async function withLock<T>(lock: string, work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (lockAbandoned(lock)) rmSync(lock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

export default async function setup(): Promise<void> {
  if (!staleReason()) return;
  // One build at a time in this clone: another vitest run waits for it, then finds lib/ fresh.
  await withLock(LOCK, async () => {
    const reason = staleReason();
    if (!reason) return;
    const began = new Date();
    console.log(`test setup: ${reason}: npm run build...`);
    await build();
    console.log(`test setup: lib/ built in ${((Date.now() - began.getTime()) / 1000).toFixed(1)} s`);
  });
}
