import { isAbsolute, normalize, relative } from 'node:path';
import { formatProblem, type Problem } from '../core/errors.js';

// What the CLI says on stderr besides its one-line errors: warnings, and under GitHub Actions
// workflow commands (https://docs.github.com/actions/reference/workflow-commands-for-github-actions),
// which show on the run's summary and, with a file and line, on that line of the file.

/** Whether stderr is read by GitHub Actions (which sets GITHUB_ACTIONS=true in every step). */
export function inGitHubActions(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.GITHUB_ACTIONS === 'true';
}

/** `::error file=F,line=L,title=T::message`, its values escaped as the runner unescapes them. */
export function annotation(
  kind: 'error' | 'warning',
  message: string,
  where: { title: string; file?: string | undefined; line?: number | undefined },
): string {
  const data = (text: string) => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const property = (text: string) => data(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
  const properties = [
    ...(where.file !== undefined ? [`file=${property(where.file)}`] : []),
    ...(where.line !== undefined ? [`line=${where.line}`] : []),
    `title=${property(where.title)}`,
  ];
  return `::${kind} ${properties.join(',')}::${data(message)}`;
}

/** A problem as an annotation: located by its file and line, its text without them. */
export function problemAnnotation(
  kind: 'error' | 'warning',
  problem: Problem,
  title: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const { file, line, ...rest } = problem;
  return annotation(kind, formatProblem(rest), { title, file: file && repositoryPath(file, env), line });
}

/** A file as GitHub locates it: relative to the checkout (GITHUB_WORKSPACE) when inside it, without `./`. */
function repositoryPath(file: string, env: NodeJS.ProcessEnv): string {
  const workspace = env.GITHUB_WORKSPACE;
  const inside = workspace && isAbsolute(file) ? relative(workspace, file) : undefined;
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : normalize(file);
}

/** A warning line for stderr: `cities-api: warning: ...`, or its annotation under GitHub Actions. */
export function warningLine(problem: Problem, env: NodeJS.ProcessEnv = process.env): string {
  return inGitHubActions(env)
    ? problemAnnotation('warning', problem, 'cities-api', env)
    : `cities-api: warning: ${formatProblem(problem)}`;
}
