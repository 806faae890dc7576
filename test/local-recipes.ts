import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shellCommands, shellWords, splitCode } from './markdown.js';
import { netlifyDev } from './netlify-dev.js';
import { ROOT } from './package-helpers.js';

// The "Run it locally" recipes of the guides, as the package test runs them in a user's project.

const SECTION = '## Run it locally';

/** The shell commands of a guide's "Run it locally" section, in order. */
export async function localRecipe(doc: string): Promise<string[]> {
  const text = await readFile(join(ROOT, doc), 'utf8');
  const start = text.indexOf(SECTION);
  if (start < 0) throw new Error(`${doc} has no "${SECTION}" section`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  return splitCode(section).blocks.flatMap((b) => (b.lang === 'sh' ? shellCommands(b.text) : []));
}

export interface RecipeAnswer {
  readonly url: string;
  readonly status: number;
  readonly type: string | null;
  readonly body: string;
}

/**
 * A Netlify guide's recipe run in the project `dir`: its `npx netlify dev` on Netlify's local
 * runtime (@netlify/dev; the Netlify CLI is not installed offline), then each `curl` as a request
 * to it. `netlify dev --dir D` publishes D without a netlify.toml; @netlify/dev has no such
 * option (it publishes what a netlify.toml says, else its project root, with that directory's
 * `_redirects` and `_headers`), so D is its root. Without --dir the project's netlify.toml says
 * what is published, and its edge functions run (on Deno, from `denoBin`).
 */
export async function runNetlifyRecipe(
  commands: readonly string[],
  dir: string,
  denoBin: string,
): Promise<{ answers: RecipeAnswer[]; answeredBy: ReadonlyMap<string, number> }> {
  const dev = commands.map(shellWords).find((w) => w.slice(0, 3).join(' ') === 'npx netlify dev');
  if (!dev) throw new Error(`no "npx netlify dev" among: ${commands.join(' | ')}`);
  const flags = dev.slice(3);
  const publish = flags[flags.indexOf('--dir') + 1];
  const unknown = flags.filter((f, i) => f !== '--offline' && f !== '--dir' && flags[i - 1] !== '--dir');
  if (unknown.length) throw new Error(`npx netlify dev: the test does not know ${unknown.join(' ')}`);
  const server = await netlifyDev(flags.includes('--dir') ? join(dir, publish!) : dir, {
    edgeFunctions: !flags.includes('--dir'),
    denoBin,
  });
  try {
    const answers: RecipeAnswer[] = [];
    for (const words of commands.map(shellWords).filter((w) => w[0] === 'curl')) {
      const url = words.find((w) => w.startsWith('http://localhost:8888/'));
      if (!url) throw new Error(`curl of no http://localhost:8888/ URL: ${words.join(' ')}`);
      const answer = await fetch(url.replace('http://localhost:8888', server.url), { redirect: 'manual' });
      answers.push({ url, status: answer.status, type: answer.headers.get('content-type'), body: await answer.text() });
    }
    return { answers, answeredBy: new Map(server.answeredBy) };
  } finally {
    await server.stop();
  }
}
