import { execFile, spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bar,
  duration,
  ESTIMATING,
  logEverySeconds,
  progressLine,
  progressParts,
  terminalLine,
  type ProgressStream,
} from '../src/cli/progress.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { manyCities, writeDataset } from './crash-helpers.js';
import { readTree, tempDir } from './helpers.js';
import { requireTool } from './tool-check.js';

// Progress as users see it: a bar with rate and ETA on a terminal, a line every few seconds in a
// log; and Ctrl-C during a build, through a real pseudo-terminal and through a pipe.

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/cities-api.js');
const SCRIPT = '/usr/bin/script';

describe('the words and the bar', () => {
  it.each([
    [
      'pages',
      [4158, 21020, 1234.4, 'pages'],
      { amount: '4158/21020 pages', percent: '19%', rate: '1234 pages/s', eta: '14s' },
    ],
    [
      'bytes',
      [12_300_000, 30_100_000, 8_100_000, 'bytes'],
      { amount: '12.3/30.1 MB', percent: '40%', rate: '8.1 MB/s', eta: '3s' },
    ],
    ['no rate yet', [0, 10, 0, 'pages'], { amount: '0/10 pages', percent: '0%', rate: '0 pages/s', eta: ESTIMATING }],
  ] as const)('%s', (_, [done, total, rate, unit], expected) => {
    expect(progressParts(done, total, rate, unit)).toEqual(expected);
  });

  it('a rate not measured long enough gives no time left', () => {
    expect(progressParts(100, 10_000, 3.2, 'pages', false).eta).toBe(ESTIMATING);
  });

  it.each([
    [0.2, '1s'],
    [59, '59s'],
    [61, '1m01s'],
    [3725, '1h02m'],
  ])('%s s is %s', (seconds, text) => expect(duration(seconds)).toBe(text));
  it.each([
    [0, 10, `[${'-'.repeat(20)}]`],
    [5, 10, `[${'#'.repeat(10)}${'-'.repeat(10)}]`],
    [10, 10, `[${'#'.repeat(20)}]`],
  ])('bar %s/%s', (done, total, text) => expect(bar(done, total)).toBe(text));
});

/** A stream that records what is written, as a terminal or not. */
function recorder(isTTY: boolean, columns?: number): ProgressStream & { text: string } {
  const stream = new Writable({
    write(chunk, _enc, done) {
      stream.text += String(chunk);
      done();
    },
  }) as Writable & { text: string; isTTY: boolean; columns?: number };
  stream.text = '';
  stream.isTTY = isTTY;
  if (columns !== undefined) stream.columns = columns;
  return stream;
}

describe('progressLine, on a clock of our own', () => {
  const drive = (stream: ProgressStream, times: readonly number[]) => {
    let now = 0;
    const line = progressLine(stream, 'building pages', { unit: 'pages', now: () => now });
    times.forEach((t, i) => {
      now = t;
      line.update((i + 1) * 100, 10_000);
    });
    line.end();
  };

  it.each([
    ['CITIES_API_PROGRESS_SECONDS unset', {}, 5],
    ['CITIES_API_PROGRESS_SECONDS=1', { CITIES_API_PROGRESS_SECONDS: '1' }, 1],
    ['CITIES_API_PROGRESS_SECONDS=0.5', { CITIES_API_PROGRESS_SECONDS: '0.5' }, 0.5],
    ['CITIES_API_PROGRESS_SECONDS=nonsense', { CITIES_API_PROGRESS_SECONDS: 'x' }, 5],
    ['CITIES_API_PROGRESS_SECONDS=0', { CITIES_API_PROGRESS_SECONDS: '0' }, 5],
  ])('in a log, a line every %s: %s s', (_, env, seconds) => expect(logEverySeconds(env)).toBe(seconds));

  it('not on a terminal: nothing the first second of the phase (from its first update), then one line every five seconds', () => {
    const stream = recorder(false);
    drive(stream, [500, 1200, 3000, 5100, 7000, 10_200]);
    expect(stream.text).toBe(
      // The first line's pace is not steady yet (143 pages/s, then 55); the second is the last 5 s's.
      'building pages: 300/10000 pages (3%), 80 pages/s, time left estimating…\nbuilding pages: 600/10000 pages (6%), 39 pages/s, about 4m00s left\n',
    );
  });

  it('on a terminal: redrawn in place with a bar, rate and ETA, cleared at the end', () => {
    const stream = recorder(true, 100);
    drive(stream, [500, 1600, 2600]);
    expect(stream.text).toBe(
      `\rbuilding pages [${'-'.repeat(20)}]  2% 200/10000 pages, 91 pages/s, ETA estimating…\x1b[K` +
        `\rbuilding pages [${'-'.repeat(20)}]  3% 300/10000 pages, 95 pages/s, ETA 1m42s\x1b[K\r\x1b[K`,
    );
  });

  it('a phase whose work starts late (a build reads and sorts first): its first line says "estimating…", the next the pace of its pages', () => {
    const stream = recorder(false);
    let now = 0;
    const line = progressLine(stream, 'building pages', { unit: 'pages', now: () => now, logEvery: 1000 });
    for (const [t, done] of [
      [30_000, 0],
      [31_000, 100],
      [32_000, 200],
    ] as const) {
      now = t;
      line.update(done, 10_000);
    }
    expect(stream.text).toBe(
      'building pages: 100/10000 pages (1%), 100 pages/s, time left estimating…\n' +
        'building pages: 200/10000 pages (2%), 100 pages/s, about 1m38s left\n',
    );
  });

  // A 140k-city build as `npm run bench` logged it: 15 s at 0 (its writers starting), 5 pages
  // in the next 10 s, then 1,800 pages/s; its first time left read "about 734h51m left".
  const slowStart = (t: number) =>
    t < 15_000 ? 0 : t < 25_000 ? Math.floor((t - 15_000) / 2000) : 5 + 1.8 * (t - 25_000);
  it.each([
    ['a line every 5 s', 5000],
    ['a line every second', 1000],
    ['a terminal, redrawn every 100 ms', 100],
  ])(
    'a build whose first pages come slowly, %s: "estimating…" until its pace is steady, then a time left within 1.5x of the truth',
    (_, every) => {
      const total = 142_025;
      const stream = recorder(every === 100, 200);
      let now = 0;
      const line = progressLine(stream, 'building pages', { unit: 'pages', now: () => now, logEvery: every });
      const truths: number[] = [];
      for (now = 0; slowStart(now) < total; now += 50) {
        const before = stream.text.length;
        line.update(Math.floor(slowStart(now)), total);
        if (stream.text.length > before) truths.push((total - slowStart(now)) / 1800);
      }
      const etas = [
        ...stream.text.matchAll(/(?:about |ETA |time left )(estimating…|(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?)/g),
      ];
      expect(etas.length).toBe(truths.length);
      const said = etas.map(([, text, h, m, s]) =>
        text === ESTIMATING ? undefined : Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0),
      );
      const first = said.findIndex((eta) => eta !== undefined);
      expect(first).toBeGreaterThan(0);
      said.slice(first).forEach((eta, i) => {
        const truth = truths[first + i]!;
        expect(eta!, `time left said ${eta} s, truly ${truth.toFixed(1)} s`).toBeLessThanOrEqual(
          Math.max(1.5 * truth, truth + 2),
        );
        expect(eta!, `time left said ${eta} s, truly ${truth.toFixed(1)} s`).toBeGreaterThanOrEqual(truth / 1.5 - 1);
      });
    },
  );

  it('on a narrow terminal: cut to its width, so that it never wraps', () => {
    const stream = recorder(true, 40);
    drive(stream, [500, 1600]);
    expect(stream.text).toBe('\rbuilding pages  2% 200/10000 pages, ETA\x1b[K\r\x1b[K');
  });

  // An 80-column terminal cut "ETA estimating…" to "ETA e" once a build passed 10,000 pages: it never showed its time left.
  it.each([
    [
      'a wide terminal: the whole bar',
      119,
      9000,
      27918,
      true,
      'building pages [######--------------] 32% 9000/27918 pages, 2500 pages/s, ETA 8s',
    ],
    [
      '80 columns, 27,918 pages: a narrower bar',
      79,
      27905,
      27918,
      true,
      'building pages [#################-] 99% 27905/27918 pages, 2500 pages/s, ETA 1s',
    ],
    [
      '80 columns, 27,918 pages, estimating: narrower still',
      79,
      27905,
      27918,
      false,
      'building pages [########-] 99% 27905/27918 pages, 2500 pages/s, ETA estimating…',
    ],
    [
      '80 columns, 142,025 pages, estimating',
      79,
      141000,
      142025,
      false,
      'building pages [######-] 99% 141000/142025 pages, 2500 pages/s, ETA estimating…',
    ],
    [
      '80 columns, a long label: no bar',
      79,
      141000,
      142025,
      true,
      'reading /data/cities-1.csv 99% 141000/142025 pages, 2500 pages/s, ETA 1s',
    ],
    ['60 columns: no bar, no rate', 59, 141000, 142025, true, 'building pages 99% 141000/142025 pages, ETA 1s'],
    ['40 columns: cut', 39, 1000, 142025, true, 'building pages  0% 1000/142025 pages, E'],
  ])('a terminal line on %s keeps its time left to the last', (_, width, done, total, measured, line) => {
    const label = line.startsWith('reading') ? 'reading /data/cities-1.csv' : 'building pages';
    const said = terminalLine(label, done, total, progressParts(done, total, 2500, 'pages', measured), width);
    expect(said).toBe(line);
    expect(said.length).toBeLessThanOrEqual(width);
  });
});

let dir: string;
let cleanup: () => Promise<void>;
const big = () => join(dir, 'big.csv');
/** The bundled sample's site, built once: each case interrupts a build over a copy of it. */
const sample = () => join(dir, 'sample-site');
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-progress-'));
  await writeDataset(big(), manyCities(3000, 'Town'));
  const built = spawn(process.execPath, [
    BIN,
    'build',
    '--data',
    join(ROOT, 'data/cities.csv'),
    '--out',
    sample(),
    '--base-url',
    'https://example.org',
  ]);
  expect(await new Promise((done) => built.on('close', done))).toBe(0);
});
afterAll(() => cleanup());

it('reading a dataset counts its bytes up to the file size', async () => {
  const seen: [number, number][] = [];
  await readDataset(big(), { onProgress: (read, size) => seen.push([read, size]) });
  const { size } = await stat(big());
  expect(seen.length).toBeGreaterThan(1);
  expect(seen.at(-1)).toEqual([size, size]);
  expect(seen.every(([read], i) => i === 0 || read > seen[i - 1]![0])).toBe(true);
});

interface Run {
  code: number | null;
  output: string;
}

/**
 * Builds the big dataset over a site of 48 cities (`build`, or `serve --data`'s first build) and
 * interrupts once `ready` matches the output: through a pseudo-terminal (script(1), Ctrl-C typed) or
 * a pipe (SIGINT sent).
 */
function interruptedBuild(
  out: string,
  how: 'terminal' | 'pipe',
  ready: RegExp,
  command: 'build' | 'serve' = 'build',
): Promise<Run> {
  const serving = command === 'serve' ? ['--port', '0'] : [];
  const args = [BIN, command, '--data', big(), '--site', out, '--base-url', 'https://example.org', ...serving];
  const child =
    how === 'terminal'
      ? spawn(SCRIPT, ['-qfec', [process.execPath, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'])
      : spawn(process.execPath, args, { env: { ...process.env, CITIES_API_PROGRESS_SECONDS: '0.5' } });
  let output = '';
  let sent = false;
  const onData = (chunk: Buffer) => {
    output += String(chunk);
    // A serve whose build ended before `ready` came would serve on: ended, so that the case fails rather than hangs.
    if (!sent && /^serving /m.test(output)) child.kill('SIGKILL');
    if (sent || !ready.test(output)) return;
    sent = true;
    if (how === 'terminal') child.stdin!.write('\x03');
    else child.kill('SIGINT');
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return new Promise((done) => child.on('close', (code) => done({ code, output })));
}

const SCRIPT_THERE = requireTool('script (util-linux)', SCRIPT, 'apt-get install -y bsdutils');

// The time left, or "estimating…" while the pace is not steady: a build that speeds up all along (a CI machine's
// other tests ending) said it to its end, and the ETA's rules are the unit table's above.
const TERMINAL = /building pages \[[#-]+\] +\d+% \d+\/\d+ pages, \d+ pages\/s, ETA (\d|estimating…)/;
const PIPE = /building pages: \d+\/\d+ pages \(\d+%\), \d+ pages\/s, (about \d\S* left|time left estimating…)\n/;
// serve --data builds the site before serving it (minutes at 140,000 cities): Ctrl-C then stops that build as build's
// does; it used to end the process (Node's default: no word, the staging tree, the lock and the preview marker left).
// Interrupted at its first line of pages: on a busy machine the pace (the ETA) may not settle before the build ends.
describe.each([
  ['a terminal', 'terminal', TERMINAL, 'build'],
  ['a pipe (a CI log)', 'pipe', PIPE, 'build'],
  ['a terminal, serve --data', 'terminal', /building pages \[[#-]+\] +\d+% \d+\/\d+ pages/, 'serve'],
  ['a pipe, serve --data', 'pipe', /building pages: \d+\/\d+ pages/, 'serve'],
] as const)('a long build on %s', (_, how, progress, command) => {
  it.skipIf(how === 'terminal' && !SCRIPT_THERE)(
    'shows its progress; Ctrl-C says the site is intact, removes the staging tree, exits 130',
    async () => {
      const out = join(dir, `site-${how}-${command}`);
      await promisify(execFile)('cp', ['-a', sample(), out]);
      const before = await readTree(out);
      const run = await interruptedBuild(out, how, progress, command);
      expect(run.output).toMatch(progress);
      expect(run.output).toMatch('cities-api: interrupted: stopping the build (Ctrl-C again to quit at once)');
      expect(run.output).toMatch(
        /cities-api: interrupted: the site .* was left as it was \(the files written so far were removed\)/,
      );
      expect(run.output).not.toMatch(/\n\s+at /);
      expect(run.code).toBe(130);
      // Nothing beside it: no staging tree, lock or preview marker.
      expect((await readdir(dir)).filter((name) => name.startsWith(`.site-${how}-${command}.`))).toEqual([]);
      expect(await readTree(out)).toEqual(before);
    },
    120_000,
  );
});
