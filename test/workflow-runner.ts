import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { onPath, quoted, run, userEnv, writeNpx } from './package-helpers.js';

// A GitHub Actions job run as the runner runs its `run:` steps (bash --noprofile --norc -eo
// pipefail, RUNNER_TEMP, the workflow's, job's and step's env), in a project directory. `uses:`
// steps are left out (checkout, setup-node, cache and credentials have nothing to do here); the
// AWS CLI is a stand-in that records each call's arguments. A step's or job's `if:` may only
// compare an env value (`env.NAME == 'value'`), evaluated against the workflow's env. `npm ci`
// runs for real once per package.json and package-lock.json (per fake-bin directory): a later run
// on the same two files gets a copy (cp -a) of the tree that install wrote, as npm ci would write it again;
// `npx` of an installed bin runs it without npm's start-up (package-helpers.ts writeNpx).

export interface Step {
  name?: string;
  if?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
export interface Job {
  if?: string;
  env?: Record<string, string>;
  steps: Step[];
}
export interface Workflow {
  env?: Record<string, string>;
  jobs: Record<string, Job>;
}
export interface StepResult {
  job: string;
  step: string;
  code: number;
  output: string;
}
export interface RunOptions {
  /** Values of the workflow's env replaced, as a user edits them. */
  readonly env?: Record<string, string>;
  /** `run:` steps left out (a deploy that would download its CLI); they are reported as skipped. */
  readonly skip?: (step: Step) => boolean;
}

/** `${{ secrets.NAME }}` as the fixed value `secret-NAME`; the run scripts themselves must hold no expression. */
function expand(env: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{\{\s*secrets\.(\w+)\s*\}\}/g, 'secret-$1')]),
  );
}

/** Whether a job or step runs: no `if:`, or `env.NAME == 'value'` holding. */
export function runsWhen(condition: string | undefined, env: Record<string, string>): boolean {
  if (condition === undefined) return true;
  const m = /^\s*env\.(\w+)\s*==\s*'([^']*)'\s*$/.exec(condition);
  if (!m) throw new Error(`the runner cannot evaluate the condition "${condition}"`);
  return (env[m[1]!] ?? '') === m[2];
}

/** Runs the `run:` steps of every job that runs, in order, stopping at the first that fails; returns each step's result and the AWS calls. */
export async function runWorkflow(
  workflow: Workflow,
  project: string,
  runnerTemp: string,
  fakeBin: string,
  options: RunOptions = {},
): Promise<{ stepResults: StepResult[]; skipped: Step[]; awsCalls: string[][] }> {
  await mkdir(runnerTemp, { recursive: true });
  await mkdir(fakeBin, { recursive: true });
  // Each call's arguments, separated by US (\037); `--query ETag` answers a new ETag each time, as CloudFront does.
  await writeFile(
    join(fakeBin, 'aws'),
    [
      '#!/bin/sh',
      'printf "%s\\037" "$@" >> "$AWS_LOG"; printf "\\n" >> "$AWS_LOG"',
      'case "$*" in *"--query ETag"*) echo "etag-$(wc -l < "$AWS_LOG" | tr -d " ")";; esac',
      '',
    ].join('\n'),
  );
  await chmod(join(fakeBin, 'aws'), 0o755);
  await writeNpm(fakeBin);
  writeNpx(fakeBin);
  const awsLog = join(runnerTemp, 'aws-calls.log');
  await writeFile(awsLog, '');
  const stepResults: StepResult[] = [];
  const skipped: Step[] = [];
  const workflowEnv = { ...expand(workflow.env), ...options.env };
  for (const [name, job] of Object.entries(workflow.jobs)) {
    if (!runsWhen(job.if, workflowEnv)) continue;
    for (const step of job.steps) {
      if (!step.run || !runsWhen(step.if, { ...workflowEnv, ...expand(job.env) })) continue;
      if (options.skip?.(step)) {
        skipped.push(step);
        continue;
      }
      const script = join(runnerTemp, `step-${stepResults.length}.sh`);
      await writeFile(script, step.run);
      const env = userEnv({
        ...workflowEnv,
        ...expand(job.env),
        ...expand(step.env),
        PATH: `${fakeBin}:${process.env.PATH}`,
        AWS_LOG: awsLog,
        RUNNER_TEMP: runnerTemp,
        GITHUB_WORKSPACE: project,
        CI: 'true',
      });
      const result = await run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], project, env);
      stepResults.push({
        job: name,
        step: step.name ?? step.run,
        code: result.code,
        output: result.stdout + result.stderr,
      });
      if (result.code !== 0) return { stepResults, skipped, awsCalls: await calls(awsLog) };
    }
  }
  return { stepResults, skipped, awsCalls: await calls(awsLog) };
}

/** `npm` in front of the real one: `npm ci` of package.json and package-lock.json already installed once is a copy of that install's node_modules. */
async function writeNpm(fakeBin: string): Promise<void> {
  const trees = join(dirname(fakeBin), `${basename(fakeBin)}-npm-ci`);
  await mkdir(trees, { recursive: true });
  const npm = quoted(onPath('npm'));
  await writeFile(
    join(fakeBin, 'npm'),
    [
      '#!/bin/sh',
      'set -e',
      `if [ "$*" != ci ]; then exec ${npm} "$@"; fi`,
      'key=$(cat package.json package-lock.json | sha256sum | cut -c1-32)',
      `tree=${quoted(trees)}/$key`,
      'if [ -d "$tree" ]; then',
      '  rm -rf node_modules',
      '  cp -a "$tree" node_modules',
      '  echo "npm ci: node_modules copied from the npm ci of the same package.json and package-lock.json ($key)"',
      '  exit 0',
      'fi',
      `${npm} ci`,
      // Copied aside then renamed: a tree is only ever seen whole.
      'cp -a node_modules "$tree.$$"',
      'mv -T "$tree.$$" "$tree"',
      '',
    ].join('\n'),
  );
  await chmod(join(fakeBin, 'npm'), 0o755);
}

async function calls(log: string): Promise<string[][]> {
  return (await readFile(log, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\x1f').slice(0, -1));
}
