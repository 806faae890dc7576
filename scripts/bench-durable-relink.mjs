#!/usr/bin/env node
// What a durable rebuild with no change costs after a build without --durable, whose files it
// links and must sync (they were left to the kernel's writeback), against the alternative of
// writing them all again (--durable --force) and against a durable rebuild of a durable site (up
// to date: what it cost before such a site was synced at all). Per round, each build in its own
// process, alternated: a build without --durable (untimed), then the durable rebuild (linked files
// still dirty); again, with `sync` before it (linked files clean); again, then --durable --force;
// then the durable rebuild of that durable site. Medians over the rounds, ratios against the rewrite.
//
//   node scripts/bench-durable-relink.mjs --data FILE [--cities N] [--rounds N] [--orderings LIST] [--page-sizes LIST] [--dir DIR]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k.json') },
    cities: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    orderings: { type: 'string', default: 'default,name_en,name_de,name_fr,name_ru' },
    'page-sizes': { type: 'string', default: '10,100' },
    dir: { type: 'string' },
  },
});
const dir = mkdtempSync(join(opts.dir ?? tmpdir(), 'cities-durable-relink-'));
const data = join(dir, 'cities.json');
writeFileSync(data, JSON.stringify(JSON.parse(readFileSync(opts.data, 'utf8')).slice(0, Number(opts.cities))));
const site = join(dir, 'site');
const settings = ['--orderings', opts.orderings, '--page-sizes', opts['page-sizes'], '--base-url', 'http://localhost'];

/** One build in its own process: its seconds and what it said. */
function build(...args) {
  const started = performance.now();
  const said = execFileSync(
    process.execPath,
    [join(ROOT, 'bin/cities-api.js'), 'build', '--data', data, '--site', site, ...settings, ...args],
    {
      encoding: 'utf8',
    },
  );
  return { seconds: (performance.now() - started) / 1000, said: said.trim().split('\n').at(-1) };
}

const KINDS = {
  'relink, dirty': () => (build('--force'), build('--durable')),
  'relink, after sync': () => (build('--force'), execFileSync('sync'), build('--durable')),
  'rewrite (--force)': () => (build('--force'), build('--durable', '--force')),
  'durable, up to date': () => build('--durable'),
};
const times = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, []]));
try {
  build();
  for (let round = 1; round <= Number(opts.rounds); round++) {
    for (const [kind, run] of Object.entries(KINDS)) {
      const load = loadavg()[0].toFixed(1);
      const { seconds, said } = run();
      times[kind].push(seconds);
      console.log(`round ${round} ${kind.padEnd(20)} ${seconds.toFixed(2)} s (load ${load}): ${said}`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rewrite = median(times['rewrite (--force)']);
  for (const [kind, xs] of Object.entries(times))
    console.log(
      `${kind.padEnd(20)} median ${median(xs).toFixed(2)} s, ${(median(xs) / rewrite).toFixed(2)}x the rewrite`,
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
