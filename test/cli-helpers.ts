import { Writable } from 'node:stream';
import { runMain } from '../src/cli/main.js';

/** The progress a phase logs once it lasts over a second (`reading data/cities.csv: …`, `building pages: …`). */
export const PROGRESS_LINES = /^(?:reading [^:\n]+|building pages): .*\n/gm;

/** Runs the CLI in-process and captures what it prints; stderr without progress lines, which only a loaded machine's timing decides. */
export async function cli(
  cwd: string,
  ...rawArgs: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await runMain({ rawArgs, cwd, stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)) });
  return { code, stdout, stderr: stderr.replace(PROGRESS_LINES, '') };
}
