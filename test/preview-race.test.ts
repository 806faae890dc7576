import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { killStragglers, spawnNode } from './crash-helpers.js';
import { tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';

// Two previews of one directory started at the same instant, in two real processes (lib/'s
// markPreview, as serve calls it): the marker's check and its write are one step, so one marks
// the site and the other is refused, never both marked (each would then rewrite the other's links).

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-preview-race-')));
afterAll(() => cleanup());
afterEach(() => killStragglers());

const ROUNDS = 100;
/** ms between two rounds: each starts at its instant, by the wall clock both processes read. */
const PERIOD = 15;

// A contender: at each round's instant (spun for, not slept: both start within microseconds), it
// marks that round's site at its own URL; it prints what each round did, then holds its markers
// (alive: the other must find them live) until the file `release` appears.
const CONTENDER = `
  import { existsSync } from 'node:fs';
  const [module, dir, url, rounds, startAt, period] = process.argv.slice(1);
  const { markPreview } = await import(module);
  const now = () => performance.timeOrigin + performance.now();
  const did = [];
  for (let round = 0; round < Number(rounds); round++) {
    const at = Number(startAt) + round * Number(period);
    while (now() < at);
    try {
      await markPreview(dir + '/site-' + round, url, 10_000);
      did.push('marked');
    } catch (error) {
      if (error.exitCode !== 2) throw error;
      did.push('refused');
    }
  }
  console.log(JSON.stringify(did));
  while (!existsSync(dir + '/release')) await new Promise((resolve) => setTimeout(resolve, 20));`;

interface Race {
  readonly what: string;
  /** A marker left beside each site before the race, else none. */
  readonly left?: object;
}

it.each<Race>([
  { what: 'no marker there' },
  // Its pid no process has (Linux's pids stay below 2^22): taken over, by one of the two.
  { what: "a dead preview's marker left", left: { pid: 2 ** 22, url: 'http://127.0.0.1:1' } },
])(
  `two processes mark one site at the same instant, $what, ${ROUNDS} times: each time one marks it, the other is refused`,
  async ({ what, left }) => {
    const dir = join(root, what.length.toString());
    await mkdir(dir);
    if (left)
      for (let round = 0; round < ROUNDS; round++)
        await writeFile(join(dir, `.site-${round}.preview`), `${JSON.stringify(left)}\n`);
    const module = pathToFileURL(join(ROOT, 'lib/app/preview-marker.js')).href;
    // Time enough for both to start and load lib/ on a loaded machine; a late round only races less.
    const startAt = Date.now() + 3000;
    const urls = ['http://127.0.0.1:11', 'http://127.0.0.1:12'];
    const runs = urls.map((url) =>
      spawnNode([
        '--input-type=module',
        '-e',
        CONTENDER,
        module,
        dir,
        url,
        String(ROUNDS),
        String(startAt),
        String(PERIOD),
      ]),
    );
    await Promise.all(runs.map((run) => run.printed(/\]\n/)));
    // Read while both still hold their markers: each names the one that marked.
    const named = await Promise.all(
      Array.from({ length: ROUNDS }, async (_, round) => {
        const text = await readFile(join(dir, `.site-${round}.preview`), 'utf8').catch(() => 'null');
        return (JSON.parse(text) as { url: string } | null)?.url;
      }),
    );
    await writeFile(join(dir, 'release'), '');
    const exits = await Promise.all(runs.map((run) => run.exited));
    for (const exit of exits) expect(exit, exit.stderr).toMatchObject({ code: 0 });
    const [a, b] = exits.map((exit) => JSON.parse(exit.stdout) as string[]);
    const rounds = Array.from({ length: ROUNDS }, (_, round) => {
      const winners = [a![round], b![round]].flatMap((did, i) => (did === 'marked' ? [urls[i]] : []));
      return { round, winners };
    });
    const wrong = rounds.filter(({ winners }) => winners.length !== 1);
    expect(wrong, `${wrong.length} of ${ROUNDS} rounds without exactly one marker`).toEqual([]);
    expect(named).toEqual(rounds.map(({ winners }) => winners[0]));
  },
);
