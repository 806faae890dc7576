import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CitiesApiError, formatProblem, optionNamed } from '../src/core/errors.js';
import { CITY_FIELDS } from '../src/core/fields.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { KIT, tempDir } from './helpers.js';

const HEADER = CITY_FIELDS.join(',');
/** A CSV row: name_ar is `ar`, the 15 other names `name`. */
const row = (id: number | string, ar = 'Name', extra: Partial<Record<'name' | 'top', string>> = {}) =>
  [
    id,
    ar,
    ...Array(15).fill(extra.name ?? 'Name'),
    '1.5',
    '2.5',
    extra.top ?? 'false',
    '2024-01-01T00:00:00Z',
    '2024-01-01T00:00:00Z',
  ].join(',');

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(() => cleanup());

async function problemsOf(name: string, content: string | Buffer, strict = false): Promise<string[]> {
  const file = join(dir, name);
  await writeFile(file, content);
  try {
    (await readDataset(file, { strict })).toCities();
  } catch (error) {
    expect(error).toBeInstanceOf(CitiesApiError);
    return (error as CitiesApiError).problems.map(
      (p) => `${p.line ?? ''}|${p.index ?? ''}|${p.field ?? ''}|${p.reason}`,
    );
  }
  return [];
}

describe('CSV input forms are all read the same', () => {
  it.each([
    ['LF', `${HEADER}\n${row(1)}\n${row(2)}\n`],
    ['CRLF', `${HEADER}\r\n${row(1)}\r\n${row(2)}\r\n`],
    ['BOM', `\ufeff${HEADER}\n${row(1)}\n${row(2)}`],
    ['blank lines', `${HEADER}\n\n${row(1)}\n\n${row(2)}\n\n`],
  ])('%s', async (name, content) => {
    const file = join(dir, `${name}.csv`);
    await writeFile(file, content);
    expect((await readDataset(file)).toCities().map((c) => c.id)).toEqual([1, 2]);
  });

  it('quoted fields keep commas, quotes and newlines', async () => {
    const file = join(dir, 'quoted.csv');
    await writeFile(file, `${HEADER}\n${row(1, '"a, ""b""\nc"')}\n`);
    expect((await readDataset(file)).toCities()[0]!.name_ar).toBe('a, "b"\nc');
  });

  it('the kit datasets read identically from CSV and JSON', async () => {
    for (const name of ['cities48', 'cities11', 'empty', 'cities1234', 'prefixed30']) {
      expect((await readDataset(join(KIT, `${name}.csv`))).toCities()).toEqual(
        (await readDataset(join(KIT, `${name}.json`))).toCities(),
      );
    }
  });
});

describe('problems name the physical line, field and reason', () => {
  it.each([
    ['a bad field on line 3', `${HEADER}\n${row(1)}\n${row(2, '')}\n`, ['3||name_ar|must not be empty']],
    [
      'line after a quoted newline',
      `${HEADER}\n${row(1, '"two\nlines"')}\n${row('x')}\n`,
      ['4||id|must be an integer between -9007199254740991 and 9007199254740991'],
    ],
    [
      'line after blank lines',
      `${HEADER}\n\n\n${row(1, 'N', { top: 'nope' })}\n`,
      ['4||top|must be true, false, 1 or 0'],
    ],
    ['wrong field count', `${HEADER}\n1,2,3\n`, ['2|||has 3 fields, the header has 22']],
    ['duplicate id names the first line', `${HEADER}\n${row(7)}\n${row(7)}\n`, ['3||id|duplicates the id of line 2']],
    [
      'unterminated quote names its record',
      `${HEADER}\n${row(1)}\n${row(2, '"open')}\n${row(3)}\n`,
      [
        expect.stringMatching(
          /^3\|\|\|CSV syntax error in the record starting here: Quote Not Closed: the parsing is finished with an opening quote$/,
        ),
      ],
    ],
    ['no header', '', ['1|||has no header row (expected id,name_ar,...,updated_at)']],
    [
      'a file separated by semicolons is told so, once, with no problem of its rows',
      `${HEADER.replaceAll(',', ';')}\n${row(1).replaceAll(',', ';')}\n${row(2).replaceAll(',', ';')}\n`,
      [
        expect.stringMatching(
          /^1\|\|\|header: missing columns "id", .*"updated_at"; the header is one column holding ";": cities-api reads comma-separated values, so save the file with commas$/,
        ),
      ],
    ],
    [
      'a file separated by tabs is told so',
      `${HEADER.replaceAll(',', '\t')}\n${row(1).replaceAll(',', '\t')}\n`,
      [expect.stringMatching(/; the header is one column holding "\\t": cities-api reads comma-separated values/)],
    ],
    [
      'lines ending with CR alone (old Mac) are told so, not as unknown columns',
      `${HEADER}\r${row(1)}\r${row(2)}\r`,
      ['1|||lines end with CR alone (old Mac line endings); save it with LF or CRLF line endings'],
    ],
    [
      'a header without an id column makes no row a duplicate',
      `${HEADER.replace('id,', '')}\n${row(1).replace(/^1,/, '')}\n${row(2).replace(/^2,/, '')}\n`,
      ['1|||header: missing column "id"'],
    ],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from(`${HEADER}\n${row(1)}\n1,`), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]),
      [expect.stringMatching(/^3\|\|\|is not valid UTF-8 \(byte 0xff/)],
    ],
    [
      'UTF-16 text (its byte-order mark) is told to be saved as UTF-8',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(HEADER, 'utf16le')]),
      [
        '1|||is not valid UTF-8 (byte 0xff at offset 0); it begins as UTF-16 text does (a byte-order mark): save it as UTF-8',
      ],
    ],
    [
      'Latin-1 text names the broken lead byte, not the byte after it',
      Buffer.concat([Buffer.from(`${HEADER}\n1,Caf`), Buffer.from([0xe9]), Buffer.from(` noir\n`)]),
      [`2|||is not valid UTF-8 (byte 0xe9 at offset ${HEADER.length + 1 + 5})`],
    ],
    [
      'Latin-1 text at the end of a line stays on its line',
      Buffer.concat([Buffer.from(`${HEADER}\n1,Caf`), Buffer.from([0xe9]), Buffer.from(`\n2,x\n`)]),
      [`2|||is not valid UTF-8 (byte 0xe9 at offset ${HEADER.length + 1 + 5})`],
    ],
  ])('%s', async (_, content, expected) => {
    expect(await problemsOf('bad.csv', content)).toEqual(expected);
  });

  it.each([
    [
      'a duplicate id on a line with another problem',
      `${HEADER}\n${row(7)}\n${row(7, '')}\n`,
      ['3||name_ar|must not be empty', '3||id|duplicates the id of line 2'],
    ],
    [
      'a duplicate of an id first seen on a line with another problem',
      `${HEADER}\n${row(7, '')}\n${row(7)}\n`,
      ['2||name_ar|must not be empty', '3||id|duplicates the id of line 2'],
    ],
    [
      'a duplicate id on a line of the wrong field count',
      `${HEADER}\n${row(7)}\n7,x,y\n`,
      ['3|||has 3 fields, the header has 22', '3||id|duplicates the id of line 2'],
    ],
    [
      'rows are checked under a header missing a column, which is said once',
      `${HEADER.replace(',top', '')}\n${row(7).replace(',false', '')}\n${row(8, '').replace(',false', '')}\n`,
      ['1|||header: missing column "top"', '3||name_ar|must not be empty'],
    ],
  ])('every problem in one run: %s', async (_, content, expected) => {
    expect(await problemsOf('all.csv', content)).toEqual(expected);
  });

  it.each([
    ['CSV', 'strict.csv', `${HEADER},population\n${row(1)},5\n`, ['1|||header: unknown column "population"']],
    [
      'JSON',
      'strict.json',
      `[${JSON.stringify({ ...Object.fromEntries(CITY_FIELDS.map((f) => [f, null])), population: 5 })}]`,
      ['1|0|population|is not a city field'],
    ],
  ])('%s: strict refuses a column that is not a city field', async (_, name, content, expected) => {
    const problems = await problemsOf(name, content, true);
    expect(problems.filter((p) => p.includes('population'))).toEqual(expected.map((e) => expect.stringContaining(e)));
  });

  it.each([
    ['CSV', 'extra.csv', `${HEADER},population,area\n${row(1)},5,6\n${row(2)},7,8\n`, 'column'],
    ['JSON', 'extra.json', '', 'key'],
  ])('%s: unknown columns are ignored, with one warning naming them all', async (kind, name, content, noun) => {
    const file = join(dir, name);
    if (kind === 'JSON') {
      const cities = (await readDataset(join(KIT, 'cities11.json'))).toCities().slice(0, 2);
      content = `[\n${cities.map((c, i) => JSON.stringify(i ? { ...c, area: 8 } : { ...c, population: 5 })).join(',\n')}\n]`;
    }
    await writeFile(file, content);
    const warnings: string[] = [];
    const table = await readDataset(file, { shownAs: name, onWarning: (w) => warnings.push(formatProblem(w)) });
    expect(table.count).toBe(2);
    expect(table.toCities().every((c) => !('population' in c) && !('area' in c))).toBe(true);
    expect(warnings).toEqual([
      `${name}:${kind === 'JSON' ? 2 : 1}: ignored unknown ${noun}s "population", "area" (not city fields; ${optionNamed('strict')} refuses them)`,
    ]);
  });

  it('messages name the file as shownAs says (the path as the user gave it)', async () => {
    const file = join(dir, 'named.csv');
    await writeFile(file, `${HEADER}\n${row(1, '')}\n`);
    const error = (await readDataset(file, { shownAs: 'data/named.csv' }).catch((e: unknown) => e)) as CitiesApiError;
    expect(error.message.split('\n')).toEqual([
      'invalid dataset data/named.csv (1 problem; nothing was written):',
      '  data/named.csv:2: field name_ar, value "": must not be empty',
    ]);
    await expect(readDataset(join(dir, 'gone.csv'), { shownAs: 'data/gone.csv' })).rejects.toThrow(
      /^the dataset data\/gone\.csv does not exist/,
    );
  });

  it('JSON problems name the record index and id', async () => {
    const good = JSON.parse((await import('node:fs')).readFileSync(join(KIT, 'cities11.json'), 'utf8')) as Record<
      string,
      unknown
    >[];
    const records = [good[0], { ...good[1], name_en: '' }, 'oops', { ...good[2], id: good[0]!.id }];
    expect(await problemsOf('bad.json', `[\n${records.map((r) => JSON.stringify(r)).join(',\n')}\n]`)).toEqual([
      '3|1|name_en|must not be empty',
      '4|2||must be a JSON object',
      '5|3|id|duplicates the id of record 0',
    ]);
  });

  it.each([
    ['a syntax error names its line and record', '[\n{"id": 1,\n}\n]', '3|0||is not valid JSON'],
    ['a file cut short names its last line', '[\n{"id": 1,\n"name_ar":\n\n', '3|0||is not valid JSON'],
    ['an empty file names line 1', '', '1|||is not valid JSON'],
    [
      'an error in a one-line file names the record, its position within it said to be so',
      '[{"id": 1}, {"id": 2}, {"id": 3,}]',
      '1|2||is not valid JSON: Expected double-quoted property name in JSON at position 9 of the record',
    ],
    [
      "a bad token names its own line, not the record's last, and the message stays on one line",
      '[\n{\n  "id": 1,\n  "top": True,\n  "name_en": "Cairo",\n  "name_fr": "Le Caire"\n}\n]',
      '4|0||is not valid JSON: Unexpected token \'T\', ..."\\n  "top": True,\\n  "n"... is not valid JSON',
    ],
  ])('JSON: %s', async (_, content, expected) => {
    const problems = (await problemsOf('syntax.json', content)).filter((p) => p.includes('not valid JSON'));
    expect(problems.map((p) => p.slice(0, expected.length))).toEqual([expected]);
  });

  it.each([
    ['an object', '{"id": 1}', '1|||must hold a JSON array of city objects'],
    ['an object after blank lines', '\n\n  {"id": 1}\n', '3|||must hold a JSON array of city objects'],
    ['a number', '42', '1|||must hold a JSON array of city objects'],
  ])('JSON: %s instead of an array names the line it starts on', async (_, content, expected) => {
    expect(await problemsOf('shape.json', content)).toEqual([expected]);
  });

  it('lists at most 50 problems and says how many more', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => row(i + 1, ''));
    const file = join(dir, 'many.csv');
    await writeFile(file, `${HEADER}\n${rows.join('\n')}\n`);
    const error = await readDataset(file).catch((e: CitiesApiError) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as CitiesApiError).problems).toHaveLength(60);
    const lines = (error as CitiesApiError).message.split('\n');
    expect(lines).toHaveLength(1 + 50 + 1);
    expect(lines.at(-1)).toBe('  ... and 10 more');
    expect(lines[1]).toBe(`  ${file}:2: field name_ar, value "": must not be empty`);
  });

  it('an unsupported extension is refused', async () => {
    await expect(readDataset(join(dir, 'cities.xml'))).rejects.toThrow(/unsupported dataset type ".xml"/);
  });

  it('a missing file is refused', async () => {
    await expect(readDataset(join(dir, 'nope.csv'))).rejects.toThrow(
      /the dataset .*nope.csv does not exist; check the path, or choose another with `data`/,
    );
  });
});
