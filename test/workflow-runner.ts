import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run, userEnv } from './package-helpers.js';

// A GitHub Actions job run as the runner runs its `run:` steps (bash --noprofile --norc -eo
// pipefail, RUNNER_TEMP, the workflow's, job's and step's env), in a project directory. `uses:`
// steps are left out (checkout, setup-node, cache and credentials have nothing to do here); the
// AWS CLI is a stand-in that records each call's arguments.

export interface Step { name?: string; uses?: string; run?: string; env?: Record<string, string> }
export interface Workflow { env?: Record<string, string>; jobs: Record<string, { env?: Record<string, string>; steps: Step[] }> }
export interface StepResult { step: string; code: number; output: string }

/** `${{ secrets.NAME }}` as the fixed value `secret-NAME`; the run scripts themselves must hold no expression. */
function expand(env: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{\{\s*secrets\.(\w+)\s*\}\}/g, 'secret-$1')]));
}

/** Runs every job's `run:` steps in order, stopping at the first that fails; returns each step's result and the AWS calls. */
export async function runWorkflow(workflow: Workflow, project: string, runnerTemp: string, fakeBin: string): Promise<{ stepResults: StepResult[]; awsCalls: string[][] }> {
  await mkdir(runnerTemp, { recursive: true });
  await mkdir(fakeBin, { recursive: true });
  // Each call's arguments, separated by US (\037); `--query ETag` answers a new ETag each time, as CloudFront does.
  await writeFile(join(fakeBin, 'aws'), [
    '#!/bin/sh',
    'printf "%s\\037" "$@" >> "$AWS_LOG"; printf "\\n" >> "$AWS_LOG"',
    'case "$*" in *"--query ETag"*) echo "etag-$(wc -l < "$AWS_LOG" | tr -d " ")";; esac', '',
  ].join('\n'));
  await chmod(join(fakeBin, 'aws'), 0o755);
  const awsLog = join(runnerTemp, 'aws-calls.log');
  await writeFile(awsLog, '');
  const stepResults: StepResult[] = [];
  for (const job of Object.values(workflow.jobs)) {
    for (const step of job.steps) {
      if (!step.run) continue;
      const script = join(runnerTemp, `step-${stepResults.length}.sh`);
      await writeFile(script, step.run);
      const env = userEnv({
        ...expand(workflow.env), ...expand(job.env), ...expand(step.env),
        PATH: `${fakeBin}:${process.env.PATH}`, AWS_LOG: awsLog, RUNNER_TEMP: runnerTemp, GITHUB_WORKSPACE: project, CI: 'true',
      });
      const result = await run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], project, env);
      stepResults.push({ step: step.name ?? step.run, code: result.code, output: result.stdout + result.stderr });
      if (result.code !== 0) return { stepResults, awsCalls: await calls(awsLog) };
    }
  }
  return { stepResults, awsCalls: await calls(awsLog) };
}

async function calls(log: string): Promise<string[][]> {
  return (await readFile(log, 'utf8')).split('\n').filter(Boolean).map((line) => line.split('\x1f').slice(0, -1));
}
