import { constants, existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CitiesApiError } from '../src/core/errors.js';
import { CityLog } from '../src/dataset/city-log.js';
import { foldsBetween } from '../src/dataset/fold-journal.js';
import { fileSystemError } from '../src/fs/fs-error.js';
import { lockDataset } from '../src/fs/lock.js';
import { KeptLock } from '../src/dataset/kept-lock.js';
import { datasetSignature } from '../src/dataset/known-ids.js';
import { LoggedCityWriter } from '../src/dataset/logged-writer.js';
import { foldLogged, unfolded } from '../src/dataset/log-fold.js';
import { LoggedIdTaken } from '../src/dataset/logged-in-file.js';
import type { NewCity } from '../src/post/create-city.js';
import {
  appendCities,
  commitStaged,
  DatasetChanged,
  discardStaged,
  stageAppend,
} from '../src/dataset/append-cities.js';
import { SCAN_BYTES } from '../src/dataset/appended-text.js';
import { cityJson } from '../src/core/json-text.js';
import { CITY_FIELDS, type City } from '../src/core/fields.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { makeCity, tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-dataset-file-')));
afterAll(() => cleanup());

/** No process has it: Linux's pids stay below pid_max, at most 2^22 (a larger number names no writer: a user's file). */
const DEAD_PID = 2 ** 22;
/** A JSON dataset of one city, id 1, as a user's file is written. */
const ONE_CITY_JSON = `[\n  ${JSON.stringify(makeCity(1))}\n]\n`;

describe('appendCities keeps the dataset and its backup whole', () => {
  it.each([
    ['a JSON dataset', 'cities.json', ONE_CITY_JSON],
    ['a CSV dataset', 'cities.csv', null],
  ])('%s: the new city is appended, FILE.bak holds the old bytes, no temporary file is left', async (_, name, text) => {
    const file = join(root, name);
    if (text) await writeFile(file, text);
    else await appendCitiesToNewCsv(file);
    const before = await readFile(file);
    const beforeIno = (await stat(file)).ino;
    await appendCities(file, [makeCity(2)]);
    expect((await readDataset(file)).count).toBe(2);
    expect((await readFile(`${file}.bak`)).equals(before)).toBe(true);
    expect((await stat(`${file}.bak`)).ino).toBe(beforeIno);
    expect((await readdir(root)).filter((n) => n.startsWith(`.${name}.`))).toEqual([]);
  });

  it('removes temporary files that killed writers left beside the dataset, not live ones', async () => {
    const file = join(root, 'left.json');
    await writeFile(file, ONE_CITY_JSON);
    await writeFile(join(root, `.left.json.tmp-${DEAD_PID}`), '[');
    await writeFile(join(root, `.left.json.bak-${DEAD_PID}`), '[');
    await writeFile(join(root, `.left.json.tmp-${process.ppid}`), '[');
    await appendCities(file, [makeCity(2)]);
    expect((await readdir(root)).filter((n) => n.startsWith('.left.json.'))).toEqual([
      `.left.json.tmp-${process.ppid}`,
    ]);
  });
});

// Two writers of one dataset in one process (two servers on it, a server and a library build()'s
// fold, a server and serve --watch's copy) each stage its new version. Both were named
// `.NAME.tmp-PID.EXT`, and each staging first removed that path: the second replaced (or, at once,
// removed: ENOENT) the first's staged file, whose commit then put the other's cities in place, its
// own lost (after its writer dropped them from the log: acknowledged cities gone).
describe('two stagings of one dataset in one process, each committed or discarded: each keeps its own staged file', () => {
  type Ends = 'commit' | 'discard';
  it.each<[string, 'in turn' | 'at once', 'first' | 'second', Ends, number[]]>([
    ['staged in turn, the first committed first', 'in turn', 'first', 'commit', [1, 2, 3]],
    ['staged in turn, the second committed first', 'in turn', 'second', 'commit', [1, 3, 2]],
    ['staged at once, the first committed first', 'at once', 'first', 'commit', [1, 2, 3]],
    ['staged at once, the second committed first', 'at once', 'second', 'commit', [1, 3, 2]],
    [
      'staged in turn, the other one discarded (serve --watch done with its copy), the first committed',
      'in turn',
      'first',
      'discard',
      [1, 2],
    ],
    ['staged in turn, the other one discarded, the second committed', 'in turn', 'second', 'discard', [1, 3]],
    ['staged at once, the other one discarded, the first committed', 'at once', 'first', 'discard', [1, 2]],
  ])(
    "%s: the committed one's city is in place; the other one's, refused (the file changed) and staged again, is added unless discarded",
    async (label, when, committed, other, ids) => {
      const name = `two-${label.replace(/\W+/g, '-').slice(0, 60)}.json`;
      const file = join(root, name);
      await writeFile(file, ONE_CITY_JSON);
      const [first, second] =
        when === 'at once'
          ? await Promise.all([stageAppend(file, [makeCity(2)]), stageAppend(file, [makeCity(3)])])
          : [await stageAppend(file, [makeCity(2)]), await stageAppend(file, [makeCity(3)])];
      // Each its own file, named for its writer: `.NAME.tmp-PID.TOKEN.EXT` (dead-drafts.ts).
      for (const staged of [first, second])
        expect(basename(staged.temp)).toMatch(
          new RegExp(`^\\.${name.replaceAll('.', '\\.')}\\.tmp-${process.pid}\\.[0-9a-z]+\\.[1-9]\\d*\\.json$`),
        );
      expect(first.temp).not.toBe(second.temp);
      const [mine, theirs] = committed === 'first' ? [first, second] : [second, first];
      if (other === 'discard') await discardStaged(theirs);
      await commitStaged(mine);
      if (other === 'commit') {
        await expect(commitStaged(theirs)).rejects.toBeInstanceOf(DatasetChanged);
        const city = committed === 'first' ? makeCity(3) : makeCity(2);
        await commitStaged(await stageAppend(file, [city]));
      }
      expect((await readDataset(file)).toCities().map((c) => c.id)).toEqual(ids);
      expect((await readdir(root)).filter((n) => n.startsWith(`.${name}.`))).toEqual([]);
    },
  );
});

async function appendCitiesToNewCsv(file: string): Promise<void> {
  await writeFile(file, '');
  const city = makeCity(1);
  const header = Object.keys(city);
  const value = (v: unknown) => (v === null ? '' : String(v));
  await writeFile(file, `${header.join(',')}\n${header.map((k) => value(city[k as keyof typeof city])).join(',')}\n`);
}

describe('a staged dataset replaces the file only if the reader reads it back, and only if the file did not change meanwhile', () => {
  const jsonDataset = async (name: string) => {
    const file = join(root, name);
    await writeFile(file, ONE_CITY_JSON);
    return file;
  };

  it.each([
    ['an id past 2^53-1', makeCity(2 ** 53)],
    ['a name of 256 characters', makeCity(2, { name_en: 'x'.repeat(256) })],
    ['an empty name', makeCity(2, { name_fr: '' })],
    ['a coordinate with 7 decimal places', makeCity(2, { longitude: 1.1234567 })],
    ['a coordinate of -0 (valid, but read back as 0)', makeCity(2, { longitude: -0, latitude: 0 })],
  ])('%s: refused before anything is written (.json and .csv)', async (label, city) => {
    for (const ext of ['json', 'csv']) {
      const file = join(root, `refused-${label.replaceAll(' ', '-')}.${ext}`);
      if (ext === 'json') await writeFile(file, ONE_CITY_JSON);
      else await appendCitiesToNewCsv(file);
      const before = await readFile(file);
      await expect(stageAppend(file, [city])).rejects.toThrow(
        /cannot be stored in the dataset as it is .*; nothing was written/,
      );
      expect((await readFile(file)).equals(before)).toBe(true);
      // The torn record dropped, the logged one folded in (recorded: fold-journal.ts), no log left.
      expect((await readdir(root)).filter((n) => n.startsWith(`.${basename(file)}.`) && !n.endsWith('.folds'))).toEqual(
        [],
      );
    }
  });

  // The commit knows the file by its signature (inode, size, times), never reads it: any of these is a change.
  const SEVEN = `[\n  ${JSON.stringify(makeCity(7))}\n]\n`;
  const ONE_AND_SEVEN = `[\n  ${JSON.stringify(makeCity(1))},\n  ${JSON.stringify(makeCity(7))}\n]\n`;
  it.each<[string, (file: string) => Promise<void>, 'after' | 'before', number[]]>([
    ['rewritten with other bytes after staging', (file) => writeFile(file, SEVEN), 'after', [7]],
    ['a city appended in place after staging', (file) => writeFile(file, ONE_AND_SEVEN), 'after', [1, 7]],
    [
      'replaced by a file of the same bytes after staging (another inode)',
      async (file) => {
        await writeFile(`${file}.new`, ONE_CITY_JSON);
        await rename(`${file}.new`, file);
      },
      'after',
      [1],
    ],
    [
      'changed after the caller read it (its signature given), before it was copied: staged from the change, refused all the same',
      (file) => writeFile(file, ONE_AND_SEVEN),
      'before',
      [1, 7],
    ],
  ])('%s: the commit refuses, keeps that change, and drops the staged file', async (label, change, when, ids) => {
    const name = `changed-${label.replace(/\W+/g, '-').slice(0, 40)}.json`;
    const file = await jsonDataset(name);
    const read = await datasetSignature(file);
    if (when === 'before') await change(file);
    const staged = await stageAppend(file, [makeCity(2)], read);
    if (when === 'after') await change(file);
    await expect(commitStaged(staged)).rejects.toBeInstanceOf(DatasetChanged);
    expect((await readDataset(file)).toCities().map((c) => c.id)).toEqual(ids);
    expect((await readdir(root)).filter((n) => n.startsWith(`.${name}.`) || n === `${name}.bak`)).toEqual([]);
  });

  it("the new file keeps the old one's permissions", async () => {
    const file = await jsonDataset('mode.json');
    await chmod(file, 0o640);
    await appendCities(file, [makeCity(2)]);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
  });
});

const CSV_HEADER = Object.keys(makeCity(1)).join(',');
/** A city as a CSV row of `header`'s columns. */
const csvRow = (city: City, header = CSV_HEADER) =>
  header
    .split(',')
    .map((field) => String(city[field as keyof City]))
    .join(',');
const CSV_CITY = csvRow(makeCity(1));
const NEW_ROW = csvRow(makeCity(2));
const JSON_CITY = JSON.stringify(makeCity(1));
const NEW_JSON = cityJson(makeCity(2));
/** The cities of these ids as JSON.stringify() pretty-prints them (makeCity's numbers are written alike by cityJson), with these line ends. */
const pretty = (ids: number[], space: number | string, eol = '\n') =>
  JSON.stringify(
    ids.map((id) => makeCity(id)),
    null,
    space,
  ).replaceAll('\n', eol);
const NEW_LINE = `  ${NEW_JSON}`;
const OTHER_ORDER = `id,name_en,${CSV_HEADER.replace(/^id,|name_en,/g, '')}`;
const FILLER = 'x'.repeat(SCAN_BYTES - CSV_HEADER.length - 2);
const CRLF_AT_CHUNK = `${CSV_HEADER}\n${FILLER}\r\n${CSV_CITY}\n`;
/** A last line (no line end) that puts the CRLF before it across the first two chunks read back from the end. */
const LONG_LAST = 'y'.repeat(SCAN_BYTES - 1);
const WHITESPACE = ' '.repeat(200_000);
/** A text with each run of 100 or more of one character said in a few (a failure's diff of 200 KB texts took minutes). */
const shown = (text: string) =>
  text.replace(/(.)\1{99,}/gs, (run, c: string) => `<${run.length} x ${JSON.stringify(c)}>`);

// A fold (serve --writable's, foldLog's) and serve --watch (not writable) stage the file plus the
// logged cities it lacks from a copy of the file, never reading it whole: the bytes the file read
// whole and written out again gave (the code before 2866848), and its mode; a CSV file's rows end
// as its first or last line does (that code looked for a CRLF anywhere in it).
describe('a dataset staged with a city appended, from a copy of its file', () => {
  it.each<[string, 'json' | 'csv', string, string]>([
    ['JSON, a record a line', 'json', ONE_CITY_JSON, `[\n  ${JSON_CITY},\n${NEW_LINE}\n]\n`],
    ['JSON on one line', 'json', `[${JSON_CITY}]`, `[${JSON_CITY},\n${NEW_LINE}\n]`],
    ['JSON, an empty array', 'json', '[]\n', `[\n${NEW_LINE}\n]\n`],
    [
      'JSON, CRLF line ends and whitespace after its bracket: kept, the new lines end CRLF',
      'json',
      `[\r\n  ${JSON_CITY}\r\n]\r\n \t\n`,
      `[\r\n  ${JSON_CITY},\r\n${NEW_LINE}\r\n]\r\n \t\n`,
    ],
    // The file's own line ends and indentation (the code before wrote LF and two spaces whatever the file held).
    ['JSON, CRLF, an empty array', 'json', '[]\r\n', `[\r\n${NEW_LINE}\r\n]\r\n`],
    [
      'JSON, CRLF, its bracket on its last line: the line ends of its first line',
      'json',
      `[\r\n  ${JSON_CITY}]\r\n`,
      `[\r\n  ${JSON_CITY},\r\n${NEW_LINE}\r\n]\r\n`,
    ],
    ['JSON indented by tabs', 'json', `[\n\t${JSON_CITY}\n]\n`, `[\n\t${JSON_CITY},\n\t${NEW_JSON}\n]\n`],
    [
      'JSON indented by four spaces, CRLF',
      'json',
      `[\r\n    ${JSON_CITY},\r\n    ${JSON_CITY}\r\n]`,
      `[\r\n    ${JSON_CITY},\r\n    ${JSON_CITY},\r\n    ${NEW_JSON}\r\n]`,
    ],
    [
      'JSON not indented',
      'json',
      `[\n${JSON_CITY},\n${JSON_CITY}\n]\n`,
      `[\n${JSON_CITY},\n${JSON_CITY},\n${NEW_JSON}\n]\n`,
    ],
    // Pretty-printed (a field a line): the new city too, its fields' indentation and the space after its keys the file's.
    ['JSON pretty-printed by two spaces', 'json', `${pretty([1], 2)}\n`, `${pretty([1, 2], 2)}\n`],
    ['JSON pretty-printed by four spaces, CRLF', 'json', pretty([1], 4, '\r\n'), pretty([1, 2], 4, '\r\n')],
    ['JSON pretty-printed by tabs', 'json', `${pretty([1], '\t')}\n`, `${pretty([1, 2], '\t')}\n`],
    [
      'JSON pretty-printed without a space after its keys',
      'json',
      pretty([1], 2).replaceAll('": ', '":'),
      pretty([1, 2], 2).replaceAll('": ', '":'),
    ],
    [
      'JSON, 200 KB of whitespace before its bracket (its end read further back): dropped',
      'json',
      `[${JSON_CITY}${WHITESPACE}]`,
      `[${JSON_CITY},\n${NEW_LINE}\n]`,
    ],
    [
      'JSON, 200 KB of whitespace after its bracket: kept',
      'json',
      `[${JSON_CITY}]${WHITESPACE}`,
      `[${JSON_CITY},\n${NEW_LINE}\n]${WHITESPACE}`,
    ],
    [
      'JSON without a closing bracket (not a dataset: refused once read)',
      'json',
      `[${JSON_CITY}`,
      `[${JSON_CITY.slice(0, -1)},\n${NEW_LINE}\n}`,
    ],
    ['an empty JSON file', 'json', '', `,\n${NEW_LINE}\n`],
    ['CSV, LF line ends', 'csv', `${CSV_HEADER}\n${CSV_CITY}\n`, `${CSV_HEADER}\n${CSV_CITY}\n${NEW_ROW}\n`],
    [
      'CSV, CRLF line ends',
      'csv',
      `${CSV_HEADER}\r\n${CSV_CITY}\r\n`,
      `${CSV_HEADER}\r\n${CSV_CITY}\r\n${NEW_ROW}\r\n`,
    ],
    ['CSV without a last line end', 'csv', `${CSV_HEADER}\n${CSV_CITY}`, `${CSV_HEADER}\n${CSV_CITY}\n${NEW_ROW}\n`],
    [
      'CSV, its columns in another order',
      'csv',
      `${OTHER_ORDER}\n`,
      `${OTHER_ORDER}\n${csvRow(makeCity(2), OTHER_ORDER)}\n`,
    ],
    [
      'CSV, a CRLF past its first chunk, its first and last lines ending LF: rows end LF (its start and end read, not the rest)',
      'csv',
      CRLF_AT_CHUNK,
      `${CRLF_AT_CHUNK}${NEW_ROW}\n`,
    ],
    [
      'CSV, its header ending LF and its last line CRLF: rows end CRLF',
      'csv',
      `${CSV_HEADER}\n${CSV_CITY}\r\n`,
      `${CSV_HEADER}\n${CSV_CITY}\r\n${NEW_ROW}\r\n`,
    ],
    [
      'CSV, its header ending CRLF and its last line LF (appended by another tool): rows end CRLF',
      'csv',
      `${CSV_HEADER}\r\n${CSV_CITY}\n`,
      `${CSV_HEADER}\r\n${CSV_CITY}\n${NEW_ROW}\r\n`,
    ],
    [
      'CSV, its CRLF where two chunks read back from its end meet, then a line longer than a chunk without a line end',
      'csv',
      `${CSV_HEADER}\n${CSV_CITY}\r\n${LONG_LAST}`,
      `${CSV_HEADER}\n${CSV_CITY}\r\n${LONG_LAST}\r\n${NEW_ROW}\r\n`,
    ],
    ['CSV, a header without a line end', 'csv', CSV_HEADER, `${CSV_HEADER}\n${NEW_ROW}\n`],
    [
      "an empty CSV file: the cities in the fields' order",
      'csv',
      '',
      `${csvRow(makeCity(2), CITY_FIELDS.join(','))}\n`,
    ],
  ])('%s', async (label, ext, text, expected) => {
    const file = join(root, `staged-${label.replace(/\W+/g, '-')}.${ext}`);
    await writeFile(file, text);
    await chmod(file, 0o640);
    const { temp } = await stageAppend(file, [makeCity(2)]);
    const seen = { text: shown(await readFile(temp, 'utf8')), mode: (await stat(temp)).mode & 0o777 };
    await discardStaged({ temp, done: () => {} });
    expect(seen).toEqual({ text: shown(expected), mode: 0o640 });
    expect(shown(await readFile(file, 'utf8'))).toBe(shown(text));
  });
});

// A file cities-api keeps beside a dataset (its lock, the lock's takeover file, its write-ahead log, its
// backup, its fold journal, a staged draft) found a directory: said as the dataset's, where it was said as
// whatever its caller named (a build's: "(of the site directory SITE)"), or not at all (a plain errno),
// or with the advice for a path the user gives ("give the path of a file").
describe('a file kept beside the dataset that is a directory: the error names it, the dataset it is of, and what to do', () => {
  const beside = (data: string, tail: string) => join(root, `.${basename(data)}${tail}`);
  const inTheWay = 'is a directory where a file belongs; move it aside or delete it (EISDIR)';
  it.each<[string, string, (data: string) => Promise<unknown>, (data: string) => string]>([
    [
      'its lock',
      '.lock',
      (data) => lockDataset(data),
      (data) => `${beside(data, '.lock')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      "its lock's takeover file, the lock a dead process's",
      '.lock.takeover',
      async (data) => {
        await writeFile(beside(data, '.lock'), `${DEAD_PID}\n`);
        return lockDataset(data);
      },
      (data) => `${beside(data, '.lock.takeover')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      'its write-ahead log, read',
      '.wal',
      (data) => CityLog.of(data).read(),
      (data) => `${beside(data, '.wal')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      'its write-ahead log, appended to',
      '.wal',
      (data) => CityLog.of(data).append([makeCity(2)]),
      (data) => `${beside(data, '.wal')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      'its write-ahead log, cut to nothing (no whole record: removed)',
      '.wal',
      (data) => CityLog.of(data).cut(0),
      (data) => `${beside(data, '.wal')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      'its write-ahead log, every record dropped (folded in: removed)',
      '.wal',
      (data) => CityLog.of(data).dropFirst(0),
      (data) => `${beside(data, '.wal')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      "Node's own ERR_FS_EISDIR (fs.rm of a directory) said as the errno it wraps",
      '.wal',
      async (data) => {
        const error = await rm(beside(data, '.wal'), { force: true }).catch((e: unknown) => e);
        throw await fileSystemError(error, { what: 'dataset' }, data);
      },
      (data) => `${beside(data, '.wal')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      'its backup, when a staged dataset is committed',
      '-bak',
      async (data) => commitStaged(await stageAppend(data, [makeCity(2)])),
      (data) => `${data}.bak (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      "its fold journal, read at a build's swap",
      '.folds',
      (data) => foldsBetween(data, '1:2:3:4', '5:6:7:8'),
      (data) => `${beside(data, '.folds')} (of the dataset ${data}) ${inTheWay}`,
    ],
    [
      'a draft of it, copied to (an exclusive copy: the draft is in the way, not the dataset)',
      '.tmp-draft',
      async (data) => {
        const error = await copyFile(data, beside(data, '.tmp-draft'), constants.COPYFILE_EXCL).catch(
          (e: unknown) => e,
        );
        throw await fileSystemError(error, { what: 'dataset' }, data);
      },
      (data) =>
        `${beside(data, '.tmp-draft')} (of the dataset ${data}) is in the way of a file written there; move it aside or delete it (EEXIST)`,
    ],
  ])('%s', async (label, tail, act, said) => {
    const data = join(root, `beside-${label.replace(/\W+/g, '-')}.json`);
    await writeFile(data, ONE_CITY_JSON);
    await mkdir(tail === '-bak' ? `${data}.bak` : beside(data, tail));
    const error = await Promise.resolve()
      .then(() => act(data))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as Error).message).toBe(said(data));
    expect(await readFile(data, 'utf8')).toBe(ONE_CITY_JSON);
  });
});

describe('LoggedCityWriter: an acknowledged creation is in the log or the file, once', () => {
  const city = (name: string): NewCity => {
    const { id: _, created_at: __, updated_at: ___, ...rest } = makeCity(0, { name });
    return rest;
  };
  const ids = async (file: string) => (await readDataset(file)).toCities().map((c) => c.id);
  const writerOf = (
    file: string,
    publish: (data: string) => Promise<void>,
    told: string[] = [],
    mark: () => Promise<void> = async () => {},
  ) =>
    LoggedCityWriter.open(file, {
      lockWait: 1000,
      publish,
      mark,
      apply: async (cities) => void told.push(`answer ${cities.map((c) => c.id).join(',')}`),
      caughtUp: async () => void told.push('caught up'),
      log: (line) => told.push(line),
    });

  it('a creation is answered before the file changes; the file and the site catch up in the background, then the log is gone', async () => {
    const file = join(root, 'logged.csv');
    await appendCitiesToNewCsv(file);
    const told: string[] = [];
    let release!: () => void;
    const building = new Promise<void>((resolve) => (release = resolve));
    const writer = await writerOf(file, () => building, told);
    expect(await writer.create(city('First'))).toMatchObject({ id: 2, name_en: 'First' });
    expect(told).toEqual(['answer 2']);
    expect(await ids(file)).toEqual([1]);
    expect((await CityLog.of(file).read()).cities.map((c) => c.name_en)).toEqual(['First']);
    expect(await writer.create(city('Second'))).toMatchObject({ id: 3 });
    release();
    await writer.idle();
    expect(await ids(file)).toEqual([1, 2, 3]);
    expect(told.at(-1)).toBe('caught up');
    // Nothing beside the file but the record of its folds (fold-journal.ts): no log, no staged copy.
    expect((await readdir(root)).filter((n) => n.startsWith('.logged.csv.'))).toEqual(['.logged.csv.folds']);
    await writer.close();
  });

  it('the file is edited by hand while the site is rebuilt: the edit kept, the logged city folded in after it', async () => {
    const file = join(root, 'hand-edit.json');
    await writeFile(file, ONE_CITY_JSON);
    let edited = false;
    const writer = await writerOf(file, async () => {
      if (!edited) await writeFile(file, `[\n  ${JSON.stringify(makeCity(1))},\n  ${JSON.stringify(makeCity(9))}\n]\n`);
      edited = true;
    });
    expect(await writer.create(city('New'))).toMatchObject({ id: 2 });
    await writer.idle();
    expect(await ids(file)).toEqual([1, 9, 2]);
    expect(await writer.create(city('Then'))).toMatchObject({ id: 10, name_en: 'Then' });
    await writer.close();
    expect(await ids(file)).toEqual([1, 9, 2, 10]);
  });

  it('the file is edited by hand between two creations (a larger id added): the first creation is still folded in, not taken for one the file holds', async () => {
    const file = join(root, 'edited-between.json');
    await writeFile(file, ONE_CITY_JSON);
    const writer = await writerOf(file, async () => {});
    expect(await writer.create(city('First'))).toMatchObject({ id: 2 });
    await writeFile(file, `[\n  ${JSON.stringify(makeCity(1))},\n  ${JSON.stringify(makeCity(9))}\n]\n`);
    expect(await writer.create(city('Second'))).toMatchObject({ id: 10 });
    await writer.idle();
    expect(await ids(file)).toEqual([1, 9, 2, 10]);
    await writer.close();
  });

  it("another process folds this writer's logged city into the file (a second server on it): the site is rebuilt from the file and catches up", async () => {
    const file = join(root, 'folded-elsewhere.json');
    await writeFile(file, ONE_CITY_JSON);
    const published: number[][] = [];
    const told: string[] = [];
    const writer = await writerOf(
      file,
      async (data) => {
        published.push(await ids(data));
        if (published.length > 1) return;
        // Meanwhile, the other server folds the shared log into the file.
        const log = CityLog.of(file);
        const { cities, bytes } = await log.read();
        await appendCities(file, cities);
        await log.dropFirst(bytes);
      },
      told,
    );
    expect(await writer.create(city('Mine'))).toMatchObject({ id: 2 });
    const settled = await Promise.race([writer.idle().then(() => 'idle'), sleep(3000).then(() => 'busy')]);
    await writer.close();
    expect({ settled, file: await ids(file), published, told: told.at(-1) }).toEqual({
      settled: 'idle',
      file: [1, 2],
      published: [
        [1, 2],
        [1, 2],
      ],
      told: 'caught up',
    });
  });

  it("another server logs a city while this one's catch-up builds (its log read): this writer's next city gets the id past it", async () => {
    const file = join(root, 'logged-elsewhere.json');
    await writeFile(file, ONE_CITY_JSON);
    let others = 0;
    const writer = await writerOf(file, async () => {
      // Once: the other server, having seen id 2 logged, logs id 3 (as it would, under the dataset's lock).
      if (!others++) await CityLog.of(file).append([makeCity(3, { name: 'Theirs' })]);
    });
    expect(await writer.create(city('Mine'))).toMatchObject({ id: 2 });
    await writer.idle();
    const next = await writer.create(city('Then'));
    await writer.idle();
    await writer.close();
    expect({ next: next.id, file: await ids(file) }).toEqual({ next: 4, file: [1, 2, 3, 4] });
  });

  it('the dataset is a link pointed at another file while serving: nothing is folded into either file (no rebuild after rebuild), the log says why; pointed back, the city is folded in', async () => {
    const [v1, v2, link] = ['v1.json', 'v2.json', 'current.json'].map((name) => join(root, name)) as [
      string,
      string,
      string,
    ];
    await writeFile(v1, ONE_CITY_JSON);
    await writeFile(v2, `[\n  ${JSON.stringify(makeCity(5))}\n]\n`);
    await symlink('v1.json', link);
    const published: number[][] = [];
    const told: string[] = [];
    const writer = await writerOf(link, async (data) => void published.push(await ids(data)), told);
    const pointTo = async (name: string) => {
      await rm(link);
      await symlink(name, link);
    };
    await pointTo('v2.json');
    expect(await writer.create(city('Created'))).toMatchObject({ id: 2 });
    const settled = await Promise.race([writer.idle().then(() => 'idle'), sleep(3000).then(() => 'busy')]);
    expect({ settled, v1: await ids(v1), v2: await ids(v2), published: published.slice(0, 2) }).toEqual({
      settled: 'idle',
      v1: [1],
      v2: [5],
      published: [],
    });
    expect(told.at(-1)).toMatch(/current\.json now links to .*v2\.json, not to .*v1\.json.*point it back/);
    await pointTo('v1.json');
    await writer.close();
    expect(await ids(v1)).toEqual([1, 2]);
  });

  it('the log deleted before its cities were folded in: said in one line, and the catch-up ends (it looped at once, for good); a server that starts still answers them', async () => {
    const file = join(root, 'log-deleted.json');
    await writeFile(file, ONE_CITY_JSON);
    const told: string[] = [];
    const writer = await writerOf(file, async () => {}, told);
    expect(await writer.create(city('Lost'))).toMatchObject({ id: 2 });
    await rm(CityLog.of(file).path);
    const settled = await Promise.race([writer.idle().then(() => 'idle'), sleep(3000).then(() => 'busy')]);
    const unbuilt = writer.unbuilt().map((c) => c.id);
    await writer.close();
    expect({ settled, unbuilt, file: await ids(file), told: told.slice(-2) }).toEqual({
      settled: 'idle',
      unbuilt: [2],
      file: [1],
      told: [
        expect.stringMatching(/^error: 1 created city \(id 2\) is in neither .*log-deleted\.json nor its log/),
        'caught up',
      ],
    });
  });

  it('the site cannot be marked behind (its disk full): the creation is refused with nothing logged (it was logged, then answered 500), and the next one gets the id it would have', async () => {
    const file = join(root, 'unmarked.json');
    await writeFile(file, ONE_CITY_JSON);
    let full = true;
    const writer = await writerOf(
      file,
      async () => {},
      [],
      async () => {
        if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    );
    await expect(writer.create(city('Refused'))).rejects.toMatchObject({ status: 500 });
    expect((await CityLog.of(file).read()).cities).toEqual([]);
    full = false;
    expect(await writer.create(city('Next'))).toMatchObject({ id: 2, name_en: 'Next' });
    await writer.close();
    expect(await ids(file)).toEqual([1, 2]);
  });

  it.each([
    // Refused before the site is marked: the marker is written under the lock.
    ['the lock held by another live process', 1, 503, []],
    // Marked, then refused under the lock: no id is left.
    ['no id left (the file holds 2^53-1)', Number.MAX_SAFE_INTEGER, 500, ['marked']],
  ])(
    'a batch refused whole (%s) leaves the site unmarked: nothing of it is behind',
    async (_, lastId, status, marked) => {
      const file = join(root, `refused-whole-${status}.json`);
      const lock = join(root, `.refused-whole-${status}.json.lock`);
      await writeFile(file, `[\n  ${JSON.stringify(makeCity(lastId))}\n]\n`);
      const told: string[] = [];
      const writer = await writerOf(
        file,
        async () => {},
        told,
        async () => void told.push('marked'),
      );
      // The parent process is alive and not this one: its lock is held, not stale.
      if (status === 503) await writeFile(lock, `${process.ppid}\n`);
      await expect(writer.create(city('Refused'))).rejects.toMatchObject({ status });
      await writer.idle();
      expect(told.filter((line) => line === 'marked' || line === 'caught up')).toEqual([...marked, 'caught up']);
      await rm(lock, { force: true });
      await writer.close();
      expect(await ids(file)).toEqual([lastId]);
    },
  );

  it("the site is marked behind under the dataset's lock, before the batch is logged: another process that finds the log empty under that lock (a build, then unmarking the site) cannot come between", async () => {
    const file = join(root, 'marked-locked.json');
    await writeFile(file, ONE_CITY_JSON);
    const seen: { locked: boolean; logged: number }[] = [];
    const mark = async () => {
      const locked = existsSync(join(root, '.marked-locked.json.lock'));
      seen.push({ locked, logged: (await CityLog.of(file).read()).cities.length });
    };
    const writer = await writerOf(file, async () => {}, [], mark);
    expect(await writer.create(city('Marked'))).toMatchObject({ id: 2 });
    await writer.close();
    expect(seen).toEqual([{ locked: true, logged: 0 }]);
  });

  it("the site cannot be built: the creation is acknowledged all the same, the file untouched, the log kept; on close it is folded into the file, not the site's: still unbuilt (a worker starting then answers it), the site never told current", async () => {
    const file = join(root, 'unpublished.json');
    await writeFile(file, ONE_CITY_JSON);
    const before = await readFile(file);
    const told: string[] = [];
    const writer = await writerOf(
      file,
      async () => {
        throw new Error('ENOSPC: no space left on device');
      },
      told,
    );
    expect(await writer.create(city('Kept'))).toMatchObject({ id: 2 });
    await writer.idle();
    expect((await readFile(file)).equals(before)).toBe(true);
    expect(told.join('\n')).toMatch(/the site is behind the data \(retrying in 1 s\): ENOSPC/);
    // Failing again: told once more, after twice as long.
    const behind = () => told.filter((line) => line.includes('the site is behind'));
    for (let t = 0; t < 100 && behind().length < 2; t++) await new Promise((r) => setTimeout(r, 50));
    expect(behind()[1]).toMatch(/the site is behind the data \(retrying in 2 s\): ENOSPC/);
    expect((await CityLog.of(file).read()).cities.map((c) => c.id)).toEqual([2]);
    await writer.close();
    let current = false;
    await writer.whenCurrent(async () => void (current = true));
    expect({ file: await ids(file), unbuilt: writer.unbuilt().map((c) => c.id), current }).toEqual({
      file: [1, 2],
      unbuilt: [2],
      current: false,
    });
  });

  // The format is the link's (its name's extension): the catch-up never read the target by its own
  // name (it refused it, "unsupported dataset type", every retry, and the site stayed behind).
  it.each<[string, string, string, () => Promise<string> | string]>([
    ['a JSON dataset linked to a file named .data', 'linked.json', 'linked-json.data', () => ONE_CITY_JSON],
    [
      'a CSV dataset linked to a file with no extension',
      'linked.csv',
      'linked-csv',
      async () => {
        await appendCitiesToNewCsv(join(root, 'linked-source.csv'));
        return readFile(join(root, 'linked-source.csv'), 'utf8');
      },
    ],
  ])('the dataset is %s: the catch-up folds the created city into it', async (_, name, target, text) => {
    await writeFile(join(root, target), await text());
    await symlink(target, join(root, name));
    const told: string[] = [];
    const writer = await writerOf(join(root, name), async () => {}, told);
    await writer.create(city('Linked'));
    await writer.idle();
    expect({ file: await ids(join(root, name)), told }).toEqual({ file: [1, 2], told: ['answer 2', 'caught up'] });
    await writer.close();
  });

  it.each([
    ['a torn last record (a write cut short) is dropped', (log: string) => `${log}{"id":3,"name_ar":"tor`, [1, 2]],
    [
      'a record with a wrong checksum is dropped, and all after it',
      (log: string) => log.replace(/\t[0-9a-f]{8}\n$/, '\t00000000\n'),
      [1],
    ],
    ['a record the file already holds (killed between the fold and the log drop) is not added twice', null, [1, 2]],
  ] as const)('at start: %s', async (_, damage, expected) => {
    const file = join(root, `recovered-${expected.length}-${damage ? 'log' : 'file'}.csv`);
    await appendCitiesToNewCsv(file);
    const log = CityLog.of(file);
    await log.append([makeCity(2, { name: 'Logged' })]);
    if (damage) await writeFile(log.path, damage(await readFile(log.path, 'utf8')));
    else await appendCities(file, [makeCity(2, { name: 'Logged' })]);
    const writer = await writerOf(file, async () => {});
    expect(await ids(file)).toEqual(expected);
    // The torn record dropped, the logged one folded in (recorded: fold-journal.ts), no log left.
    expect((await readdir(root)).filter((n) => n.startsWith(`.${basename(file)}.`) && !n.endsWith('.folds'))).toEqual(
      [],
    );
    expect(await writer.create(city('Next'))).toMatchObject({ id: expected.at(-1)! + 1 });
    await writer.close();
  });
});

describe("KeptLock: the dataset's lock kept from one batch to the next only while creations wait", () => {
  const lockOf = (name: string) => join(root, `.${name}.lock`);
  // The pid a lock file holds (its first line).
  const held = async (name: string) => (await readFile(lockOf(name), 'utf8').catch(() => null))?.split('\n')[0] ?? null;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  it.each([
    ['no creation waits: released', async () => 1, false, null],
    ['creations wait: kept (held by this process)', async () => 1, true, String(process.pid)],
    [
      'creations wait but the task failed: released',
      async () => {
        throw new Error('disk full');
      },
      true,
      null,
    ],
    ['creations wait but it was kept 100 ms: released (another process gets its turn)', () => pause(120), true, null],
  ])('%s', async (name, task, more, holder) => {
    const file = join(root, `kept-${name.split(':')[0]!.replaceAll(' ', '-')}.json`);
    await writeFile(file, '[]\n');
    const lock = new KeptLock(file, 1000, () => {});
    await lock.run(task, () => more).catch(() => undefined);
    expect(await held(basename(file))).toBe(holder);
    // The next turn needs no lock taken again; after it, with none waiting, the lock is gone.
    expect(await lock.run(async () => held(basename(file)))).toBe(String(process.pid));
    expect(await held(basename(file))).toBe(null);
  });
});

// A logged city whose id the file holds is folded in only if the file's record is that city: the
// file edited by hand after a writable server was killed (a row of the user's given the logged id
// 49) was taken for it, and the fold deleted the log: an acknowledged city lost, silently.
describe("a logged city whose id the file holds: folded in only if the file's record is it", () => {
  const theirs = (id: number) => makeCity(id, { name: 'Mine', longitude: 7 });
  it.each<[string, City[], City[], number[]]>([
    [
      'the same record (a fold killed between its rename and the log drop): folded, log gone',
      [makeCity(49)],
      [makeCity(49)],
      [],
    ],
    [
      "a row of the user's with the logged id: refused, the log kept, the file unchanged",
      [theirs(49)],
      [makeCity(49)],
      [49],
    ],
    [
      'several logged (48 folded, 49 taken, 50 not in the file): refused whole, nothing written',
      [makeCity(48), theirs(49)],
      [makeCity(48), makeCity(49), makeCity(50)],
      [49],
    ],
  ])('%s', async (name, inFile, logged, refused) => {
    const dir = join(root, `taken-${name.length}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
    const file = join(dir, 'cities.csv');
    const text = `${CSV_HEADER}\n${[makeCity(1), ...inFile].map((city) => `${csvRow(city)}\n`).join('')}`;
    await writeFile(file, text);
    const log = CityLog.of(file);
    await log.append(logged);
    const folds = [
      () => foldLogged(file, 1000, () => {}),
      () =>
        LoggedCityWriter.open(file, {
          lockWait: 1000,
          publish: async () => {},
          mark: async () => {},
          apply: async () => {},
          caughtUp: async () => {},
          log: () => {},
        }).then((writer) => writer.close()),
    ];
    for (const fold of folds) {
      if (!refused.length) {
        await fold();
        expect((await log.read()).bytes).toBe(0);
        continue;
      }
      const error = await fold().then(
        () => null,
        (e: Error) => e,
      );
      expect(error).toBeInstanceOf(LoggedIdTaken);
      expect(error?.message).toContain(file);
      expect(error?.message).toContain(log.path);
      expect(error?.message).toContain(`id ${refused[0]}`);
      expect(error?.message).toContain('name_en "Mine" in the file, "City 49" logged');
      expect(error?.message).toContain('Give the row of your own another id, or remove it, then run again');
      expect((await log.read()).cities).toEqual(logged);
      expect(await readFile(file, 'utf8')).toBe(text);
    }
    const ids = [1, ...new Set([...inFile, ...logged].map((city) => city.id))].sort((a, b) => a - b);
    if (!refused.length) expect((await readDataset(file)).toCities().map((c) => c.id)).toEqual(ids);
    // validate names them too (writing nothing).
    const { taken } = await unfolded(file, await readDataset(file));
    expect(taken.map((t) => t.logged.id)).toEqual(refused.length ? refused : []);
  });
});
