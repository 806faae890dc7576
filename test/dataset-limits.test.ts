import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_FILE, loadConfig } from '../src/cli/config-file.js';
import { CitiesApiError, formatProblem } from '../src/core/errors.js';
import { CITY_FIELDS } from '../src/core/fields.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { normalizeBaseUrl, parseCollation, parseOrderings, parsePageSizes } from '../src/site/spec.js';
import { tempDir } from './helpers.js';

// #17: what a dataset reader holds and prints is bounded, whatever the file: a record longer
// than MAX_RECORD_BYTES stops the reading, devices and pipes are refused unread, and a message
// never repeats more than 80 characters of the input. Large files are generated here, never committed.

const HUGE = 200 * 1024 * 1024;
const HEADER = CITY_FIELDS.join(',');
const ROW = (id: string) =>
  [id, ...Array(16).fill('Name'), '1.5', '2.5', 'false', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z'].join(',');
const RECORD = (extra: string) =>
  `{"id":1,${CITY_FIELDS.slice(1, 17)
    .map((f) => `"${f}":"N"`)
    .join(
      ',',
    )},"longitude":1,"latitude":2,"top":false,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"${extra}}`;

let dir: string;
let cleanup: () => Promise<void>;

/** Writes head, then `size` bytes of `fill`, then tail, without holding them. */
async function writeLarge(name: string, head: string, fill: string, size: number, tail: string): Promise<string> {
  const file = join(dir, name);
  const out = createWriteStream(file);
  const block = Buffer.from(fill.repeat((1024 * 1024) / fill.length));
  out.write(head);
  for (let written = 0; written < size; written += block.length) if (!out.write(block)) await once(out, 'drain');
  out.end(tail);
  await once(out, 'finish');
  return file;
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-api-limits-'));
  await writeLarge('one-line.csv', `${HEADER}\n`, 'x,', HUGE, '');
  await writeLarge('one-record.json', '[{"id":1,"name_en":"', 'x', HUGE, '"}]');
  await writeLarge('late-syntax-error.json', '[', ' ', 64 * 1024 * 1024, `${RECORD(',')}]`);
  for (const name of ['zeros.csv', 'zeros.json']) {
    await writeFile(join(dir, name), '');
    await truncate(join(dir, name), HUGE); // a sparse file of NUL bytes
  }
  await symlink('/dev/zero', join(dir, 'dev-zero.csv'));
  await promisify(execFile)('mkfifo', [join(dir, 'pipe.csv')]);
  await mkdir(join(dir, 'folder.json'));
  await writeFile(join(dir, 'long-header.csv'), `${HEADER},${'c'.repeat(500_000)}\n${ROW('1')},x\n`);
  await writeFile(join(dir, 'bad-quote.csv'), `${HEADER}\n1,${'a'.repeat(500_000)}"b,${ROW('2').slice(2)}\n`);
  await writeFile(join(dir, 'long-key.json'), `[${RECORD(`,"${'k'.repeat(500_000)}":1`)}]`);
  await writeFile(join(dir, 'long-id.json'), `[${RECORD('').replace('"id":1', `"id":"${'9'.repeat(500_000)}"`)}]`);
  await writeFile(join(dir, 'ok.csv'), `${HEADER}\n${ROW('1')}\n`);
}, 120_000);
afterAll(() => cleanup());

const CASES: [string, string, RegExp][] = [
  [
    'a 200 MB line: the record stops the reading',
    'one-line.csv',
    /one-line\.csv:2: the record starting here runs past 1048576 bytes without ending/,
  ],
  ['a 200 MB JSON record', 'one-record.json', /one-record\.json:1: record 0: is longer than 1048576 bytes/],
  ['200 MB of NUL bytes as CSV', 'zeros.csv', /zeros\.csv:1: the record starting here runs past 1048576 bytes/],
  [
    '200 MB of NUL bytes as JSON',
    'zeros.json',
    /zeros\.json:1: is not valid JSON: unexpected byte 0x00 where the array should begin/,
  ],
  [
    'a link to /dev/zero',
    'dev-zero.csv',
    /^cannot read dataset .*dev-zero\.csv: it is a device; give the path of a regular \.csv or \.json file$/,
  ],
  ['a named pipe', 'pipe.csv', /^cannot read dataset .*pipe\.csv: it is a pipe \(FIFO\)/],
  ['a directory', 'folder.json', /^cannot read dataset .*folder\.json: it is a directory/],
  [
    'a syntax error after 64 MB of JSON is located without reading the file again',
    'late-syntax-error.json',
    /late-syntax-error\.json:1: record 0: is not valid JSON: Expected double-quoted property name/,
  ],
  [
    'a 500 KB column name',
    'long-header.csv',
    /long-header\.csv:1: header: unknown column "c{60,}\.\.\. \(expected id,/,
  ],
  [
    'a quote inside a 500 KB field',
    'bad-quote.csv',
    /bad-quote\.csv:2: CSV syntax error in the record starting here: Invalid Opening Quote: .*value is "a{60,}\.\.\.$/,
  ],
  [
    'a 500 KB key',
    'long-key.json',
    /long-key\.json:1: record 0 \(id 1\): field k{60,}\.\.\., value 1: is not a city field/,
  ],
  [
    'a 500 KB id',
    'long-id.json',
    /long-id\.json:1: record 0 \(id "9{60,}\.\.\.\): field id, value "9{60,}\.\.\.: must be an integer/,
  ],
];

describe('#17 a dataset is read within bounds, and refused in a few short lines', () => {
  it.each(CASES)('%s', async (_, name, expected) => {
    // Strict: the long column and key are refused (without it, ignored with the warning below).
    const error = await readDataset(join(dir, name), { strict: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CitiesApiError);
    const message = (error as CitiesApiError).message;
    expect(message).toMatch(expected);
    for (const line of message.split('\n')) expect(line.length, line.slice(0, 200)).toBeLessThan(400);
  });

  it.each([
    [
      'a 500 KB column name',
      'long-header.csv',
      /^long-header\.csv:1: ignored unknown column "c{60,}\.\.\. \(not a city field/,
    ],
    ['a 500 KB key', 'long-key.json', /^long-key\.json:1: ignored unknown key "k{60,}\.\.\. \(not a city field/],
  ])('not strict, %s is ignored with one short warning', async (_, name, expected) => {
    const warnings: string[] = [];
    const table = await readDataset(join(dir, name), {
      shownAs: name,
      onWarning: (w) => warnings.push(formatProblem(w)),
    });
    expect(table.count).toBe(1);
    expect(warnings).toEqual([expect.stringMatching(expected)]);
    expect(warnings[0]!.length).toBeLessThan(200);
  });

  it('the largest city record (16 names of 255 four-byte characters) is read', async () => {
    const file = join(dir, 'largest.csv');
    await writeFile(file, `${HEADER}\n${ROW('1').replaceAll('Name', '𝒜'.repeat(255))}\n${ROW('2')}\n`);
    expect((await readDataset(file)).toCities()[0]!.name_en).toBe('𝒜'.repeat(255));
  });
});

describe('#17 settings and config values are quoted short in messages', () => {
  const long = 'x'.repeat(500_000);
  it.each([
    ['a base URL', () => normalizeBaseUrl(long)],
    ['a page size', () => parsePageSizes(long)],
    ['an ordering', () => parseOrderings(long)],
    ['a collation', () => parseCollation(long)],
  ])('%s', (_, parse) => {
    expect(parse).toThrow(/^invalid [^"]*"x{70,}\.\.\.": .{0,150}$/);
  });

  it('a config file with a 500 KB key and value', async () => {
    const project = join(dir, 'config-long');
    await mkdir(project);
    await writeFile(join(project, CONFIG_FILE), JSON.stringify({ [long]: 1 }));
    await expect(loadConfig(project)).rejects.toThrow(/unknown setting "x{70,}\.\.\." \(known: [^)]*\)$/);
    await writeFile(join(project, CONFIG_FILE), JSON.stringify({ baseUrl: [long] }));
    await expect(loadConfig(project)).rejects.toThrow(
      /setting "baseUrl" has the wrong type \(\["x{70,}\.\.\.\), expected a string$/,
    );
  });
});

describe('#17 a config file that is not a regular file is refused unread', () => {
  it('a named pipe as cities-api.config.json', async () => {
    const project = join(dir, 'project');
    await mkdir(project);
    await promisify(execFile)('mkfifo', [join(project, CONFIG_FILE)]);
    await expect(loadConfig(project)).rejects.toThrow(/cities-api\.config\.json: it is not a regular file$/);
  });
});

/** The peak RSS (MiB) of a child process that reads `file` with readDataset (the compiled lib/). */
async function peakRss(file: string): Promise<number> {
  const script = `import { readDataset } from ${JSON.stringify(join(import.meta.dirname, '..', 'lib', 'index.js'))};
    await readDataset(${JSON.stringify(file)}).catch(() => {});
    process.stdout.write(String(process.resourceUsage().maxRSS / 1024));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  return Number(stdout);
}

describe('#17 memory stays bounded (peak RSS of a child process, against one that reads a 1-city file)', () => {
  it.each([['one-line.csv'], ['one-record.json'], ['zeros.csv'], ['late-syntax-error.json']])('%s', async (name) => {
    const baseline = await peakRss(join(dir, 'ok.csv'));
    const peak = await peakRss(join(dir, name));
    expect(peak - baseline, `peak ${peak.toFixed(0)} MiB, baseline ${baseline.toFixed(0)} MiB`).toBeLessThan(64);
  });
});
