import { CsvSyntaxError, readCsvRows } from './csv-rows.js';
import { showValue } from '../core/errors.js';
import { CITY_FIELDS } from '../core/fields.js';
import { elementSyntaxError, JsonArraySplitter, JsonShapeError } from './json-records.js';
import { isCityField, unknownFields, validateRecord, validId, type RawRecord } from '../core/validate-record.js';
import type { Collector, Where } from './dataset-problems.js';

// A dataset's records, each validated as the format has it (read-dataset.ts reads the file, checks
// its bytes are UTF-8 and makes the table): a CSV's rows against its header (the header's own
// problems said first: columns missing, unknown or repeated, another separator), a JSON array's
// elements as objects. Every problem goes to the Collector, which refuses the dataset whole.

/** A CSV dataset's header checked and each row validated into `collector` (its syntax errors too). */
export async function readCsvRecords(
  chunks: AsyncIterable<Buffer>,
  collector: Collector,
  strict: boolean,
): Promise<void> {
  const reading = chunks[Symbol.asyncIterator]();
  const first = await reading.next();
  if (!first.done && crAloneEnds(first.value)) {
    await reading.return?.();
    return collector.problem({ line: 1, reason: CR_ALONE });
  }
  chunks = (async function* () {
    if (!first.done) yield first.value;
    for (let next = await reading.next(); !next.done; next = await reading.next()) yield next.value;
  })();
  let header: readonly string[] | undefined;
  let absent: ReadonlySet<string> = new Set();
  let known: readonly number[] = [];
  try {
    await readCsvRows(chunks, ({ line, values }) => {
      if (!header) {
        header = values;
        for (const reason of headerProblems(header, strict)) collector.problem({ line, reason });
        absent = new Set(CITY_FIELDS.filter((field) => !values.includes(field)));
        // The columns read: the city fields (the first of a repeated one); the others are reported once, here.
        known = values.flatMap((name, i) => (isCityField(name) ? [i] : []));
        if (!strict)
          collector.ignore(
            values.filter((name) => !isCityField(name)),
            line,
          );
      } else if (values.length !== header.length) {
        collector.problem({ line, reason: `has ${values.length} fields, the header has ${header.length}` });
        // Its id, if readable where the header says, is still checked against the others.
        const id = validId(values[header.indexOf('id')], true);
        if (header.includes('id') && id !== undefined) collector.id(id, { line });
      } else {
        const raw: Record<string, string> = {};
        for (const i of known) raw[header[i]!] ??= values[i]!;
        collector.record(validateRecord(raw, true, { absent }), { line });
      }
    });
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    collector.problem({ line: error.line, reason: error.message });
  }
  if (!header && !collector.total)
    collector.problem({ line: 1, reason: 'has no header row (expected id,name_ar,...,updated_at)' });
}

const CR_ALONE = 'lines end with CR alone (old Mac line endings); save it with LF or CRLF line endings';

/**
 * Old Mac line endings: the first line (up to an LF, if any) holds column names, then a CR that no
 * LF follows. csv-parse would read the whole file as one header row (its values "unknown columns").
 */
function crAloneEnds(first: Buffer): boolean {
  const lf = first.indexOf(10);
  const line = first.subarray(0, lf < 0 ? first.length : lf).toString('utf8');
  const cr = line.indexOf('\r');
  if (cr < 0 || cr === line.length - 1) return false; // no CR, or a CRLF's (or the chunk ends on it)
  return (
    line
      .slice(0, cr)
      .replace(/^\ufeff/, '')
      .split(',')
      .filter(isCityField).length >= 2
  );
}

const OTHER_SEPARATORS = [';', '\t', '|'];

function headerProblems(header: readonly string[], strict: boolean): string[] {
  const list = (names: string[]) => [...new Set(names)].map((n) => showValue(n)).join(', ');
  const missing = CITY_FIELDS.filter((name) => !header.includes(name));
  const unknown = strict ? header.filter((name) => !isCityField(name)) : [];
  const repeated = header.filter((name, i) => header.indexOf(name) !== i);
  // A header of one column holding another separator: the file was saved with it (a spreadsheet's ";" or tabs).
  const separator = header.length === 1 ? OTHER_SEPARATORS.find((c) => header[0]!.includes(c)) : undefined;
  const cause = separator
    ? `; the header is one column holding ${showValue(separator)}: cities-api reads comma-separated values, so save the file with commas`
    : '';
  return [
    ...(missing.length ? [`header: missing column${missing.length > 1 ? 's' : ''} ${list(missing)}${cause}`] : []),
    ...(unknown.length
      ? [`header: unknown column${unknown.length > 1 ? 's' : ''} ${list(unknown)} (expected ${CITY_FIELDS.join(',')})`]
      : []),
    ...(repeated.length
      ? [
          `header: column${repeated.length > 1 ? 's' : ''} ${list(repeated)} appear${repeated.length > 1 ? '' : 's'} more than once`,
        ]
      : []),
  ];
}

/** A JSON dataset's elements (an array of objects) each validated into `collector` (its syntax errors too). */
export async function readJsonRecords(
  chunks: AsyncIterable<Buffer>,
  collector: Collector,
  strict: boolean,
): Promise<void> {
  const splitter = new JsonArraySplitter((text, index, line) => {
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      throw elementSyntaxError(text, line, index)!;
    }
    const isObject = typeof record === 'object' && record !== null && !Array.isArray(record);
    const id = isObject ? (record as RawRecord).id : undefined;
    const where: Where = { line, index, ...(id !== undefined ? { id } : {}) };
    if (!isObject) return collector.problem({ ...where, reason: 'must be a JSON object' });
    if (!strict) collector.ignore(unknownFields(record as RawRecord), line);
    collector.record(validateRecord(record as RawRecord, false, { strict }), where);
  });
  try {
    for await (const chunk of chunks) splitter.push(chunk);
    splitter.end();
  } catch (error) {
    if (!(error instanceof JsonShapeError)) throw error;
    collector.problem({
      line: error.line,
      ...(error.index !== undefined ? { index: error.index } : {}),
      reason: error.message,
    });
  }
}
