import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileSystemError } from '../fs/fs-error.js';
import { DATASET_ROLE } from './sample.js';
import { datasetHash, digestFile } from './dataset-digest.js';
import { CityTableBuilder, type CityTable } from '../core/city-table.js';
import { CsvSyntaxError, readCsvRows } from './csv-rows.js';
import { CitiesApiError, formatProblem, shortText, showValue, type Problem } from '../core/errors.js';
import { CITY_FIELDS, type City } from '../core/fields.js';
import { elementSyntaxError, JsonArraySplitter, JsonShapeError } from './json-records.js';
import { validateRecord, type RawRecord, type RecordResult } from '../core/validate-record.js';

export const MAX_LISTED_PROBLEMS = 50;
/** Problems kept for the error object; beyond this they are only counted. */
const MAX_KEPT_PROBLEMS = 10_000;
const CHUNK_BYTES = 256 * 1024;

type Where = Omit<Problem, 'reason'>;

export interface ReadOptions {
  /** Called after each chunk with the bytes read so far and the file's size. */
  readonly onProgress?: (bytesRead: number, bytes: number) => void;
  /** Stops reading (its reason thrown) once aborted. */
  readonly signal?: AbortSignal | undefined;
  /** Called with the file's digest (datasetHash) once it is read whole and valid. */
  readonly onDigest?: (digest: Buffer) => void;
}

/**
 * Reads and validates a dataset (`.csv` or `.json`) chunk by chunk into a compact CityTable.
 * An invalid dataset is refused as a whole: one CitiesApiError listing every problem with
 * file, line or record, field, value and reason.
 */
export async function readDataset(file: string, options: ReadOptions = {}): Promise<CityTable> {
  const format = await checkDatasetFile(file);
  const collector = new Collector();
  const size = options.onProgress ? (await stat(file)).size : 0;
  const hash = options.onDigest && datasetHash(format);
  const chunks = utf8Chunks(file, (read, chunk) => {
    options.signal?.throwIfAborted();
    options.onProgress?.(read, Math.max(size, read));
    hash?.update(chunk);
  });
  try {
    if (format === '.csv') await readCsv(chunks, collector);
    else await readJson(chunks, collector);
  } catch (error) {
    if (!(error instanceof InvalidUtf8)) throw await fileSystemError(error, DATASET_ROLE, file);
    collector.problem({
      line: error.line,
      reason: `is not valid UTF-8 (byte 0x${error.byte.toString(16)} at offset ${error.offset})`,
    });
  }
  if (collector.total) throw datasetError(file, collector);
  if (hash) options.onDigest!(hash.digest());
  return collector.table.finish();
}

/** The digest of a dataset file (datasetHash), refused as readDataset refuses it; nothing parsed. */
export async function datasetDigest(
  file: string,
  options: Pick<ReadOptions, 'onProgress' | 'signal'> = {},
): Promise<Buffer> {
  const format = await checkDatasetFile(file);
  const size = options.onProgress ? (await stat(file)).size : 0;
  return digestFile(file, format, (read) => {
    options.signal?.throwIfAborted();
    options.onProgress?.(read, Math.max(size, read));
  }).catch(async (error: unknown) => {
    throw await fileSystemError(error, DATASET_ROLE, file);
  });
}

/**
 * The dataset file's format, once it is known to be a regular `.csv` or `.json` file: a device,
 * FIFO or directory (`/dev/zero` behind a `.csv` link) is refused before anything is read.
 */
export async function checkDatasetFile(file: string): Promise<'.csv' | '.json'> {
  const format = extname(file).toLowerCase();
  // A directory is said to be one, whatever its name.
  if (format !== '.csv' && format !== '.json' && !(await stat(file).catch(() => null))?.isDirectory()) {
    throw new CitiesApiError(
      `${file}: unsupported dataset type "${shortText(format) || '(none)'}": use a .csv or .json file`,
    );
  }
  const info = await stat(file).catch(async (error: unknown) => {
    throw await fileSystemError(error, DATASET_ROLE, file);
  });
  if (!info.isFile()) {
    const kind = info.isDirectory()
      ? 'a directory'
      : info.isFIFO()
        ? 'a pipe (FIFO)'
        : info.isCharacterDevice() || info.isBlockDevice()
          ? 'a device'
          : 'not a regular file';
    throw new CitiesApiError(
      `cannot read dataset ${file}: it is ${kind}; give the path of a regular .csv or .json file`,
    );
  }
  return format as '.csv' | '.json';
}

/** The bytes of a dataset file (to hash it), refused as readDataset refuses it. */
export async function readDatasetBytes(file: string): Promise<Buffer> {
  await checkDatasetFile(file);
  return readFile(file).catch(async (error: unknown) => {
    throw await fileSystemError(error, DATASET_ROLE, file);
  });
}

/** Gathers validated cities (while all is well) and problems (capped), checking ids are unique. */
class Collector {
  readonly table = new CityTableBuilder();
  readonly problems: Problem[] = [];
  total = 0;
  /** id -> where it was first seen: a CSV line, or a JSON record index as its bitwise complement. */
  private readonly firstSeen = new Map<number, number>();

  problem(p: Problem): void {
    this.total++;
    if (this.problems.length < MAX_KEPT_PROBLEMS) this.problems.push(p);
  }

  record(result: RecordResult, where: Where): void {
    if (!result.city) {
      for (const p of result.problems) this.problem({ ...where, ...p });
      return;
    }
    const first = this.firstSeen.get(result.city.id);
    const place = (at: number) => (at < 0 ? `record ${~at}` : `line ${at}`);
    if (first !== undefined)
      this.problem({ ...where, field: 'id', value: result.city.id, reason: `duplicates the id of ${place(first)}` });
    else this.firstSeen.set(result.city.id, where.index !== undefined ? ~where.index : where.line!);
    if (!this.total) this.table.add(result.city as City);
  }
}

async function readCsv(chunks: AsyncIterable<Buffer>, collector: Collector): Promise<void> {
  let header: readonly string[] | undefined;
  let headerOk = false;
  try {
    await readCsvRows(chunks, ({ line, values }) => {
      if (!header) {
        header = values;
        const found = headerProblems(header);
        headerOk = !found.length;
        for (const reason of found) collector.problem({ line, reason });
      } else if (!headerOk) {
        return;
      } else if (values.length !== header.length) {
        collector.problem({ line, reason: `has ${values.length} fields, the header has ${header.length}` });
      } else {
        const raw: Record<string, string> = {};
        for (let i = 0; i < header.length; i++) raw[header[i]!] = values[i]!;
        collector.record(validateRecord(raw, true), { line });
      }
    });
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    collector.problem({ line: error.line, reason: error.message });
  }
  if (!header && !collector.total)
    collector.problem({ line: 1, reason: 'has no header row (expected id,name_ar,...,updated_at)' });
}

function headerProblems(header: readonly string[]): string[] {
  const known = CITY_FIELDS as readonly string[];
  const list = (names: string[]) => [...new Set(names)].map((n) => showValue(n)).join(', ');
  const missing = known.filter((name) => !header.includes(name));
  const unknown = header.filter((name) => !known.includes(name));
  const repeated = header.filter((name, i) => header.indexOf(name) !== i);
  return [
    ...(missing.length ? [`header: missing column${missing.length > 1 ? 's' : ''} ${list(missing)}`] : []),
    ...(unknown.length
      ? [`header: unknown column${unknown.length > 1 ? 's' : ''} ${list(unknown)} (expected ${known.join(',')})`]
      : []),
    ...(repeated.length
      ? [
          `header: column${repeated.length > 1 ? 's' : ''} ${list(repeated)} appear${repeated.length > 1 ? '' : 's'} more than once`,
        ]
      : []),
  ];
}

async function readJson(chunks: AsyncIterable<Buffer>, collector: Collector): Promise<void> {
  const splitter = new JsonArraySplitter((text, index, line) => {
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      throw elementSyntaxError(text, line)!;
    }
    const isObject = typeof record === 'object' && record !== null && !Array.isArray(record);
    const id = isObject ? (record as RawRecord).id : undefined;
    const where: Where = { line, index, ...(id !== undefined ? { id } : {}) };
    if (!isObject) collector.problem({ ...where, reason: 'must be a JSON object' });
    else collector.record(validateRecord(record as RawRecord, false), where);
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

class InvalidUtf8 extends Error {
  constructor(
    readonly offset: number,
    readonly byte: number,
    readonly line: number,
  ) {
    super('invalid UTF-8');
  }
}

/** The file's chunks, checked to be UTF-8 on the way (InvalidUtf8 names the first bad byte). */
async function* utf8Chunks(file: string, onChunk: (bytesRead: number, chunk: Buffer) => void): AsyncGenerator<Buffer> {
  let carry = Buffer.alloc(0);
  // File offset and line of carry's first byte (everything before it is checked).
  let offset = 0;
  let line = 1;
  for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    // A multi-byte character may straddle chunks: check up to the last complete one, carry the rest.
    const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const complete = bytes.length - incompleteTail(bytes);
    if (!isUtf8(bytes.subarray(0, complete))) throw invalidUtf8(bytes, offset, line);
    line += countNewlines(bytes.subarray(0, complete));
    offset += complete;
    carry = Buffer.from(bytes.subarray(complete));
    onChunk(offset + carry.length, chunk);
    yield chunk;
  }
  if (carry.length) throw invalidUtf8(carry, offset, line);
}

/** How many bytes at the end of `bytes` begin a UTF-8 sequence that is not finished yet (0-3). */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) !== 0x80) {
      const need = b >= 0xf8 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      return need > back ? back : 0;
    }
  }
  return 0;
}

function countNewlines(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}

/** Locates the first invalid byte in `bytes`, which start at file offset `offset`, on line `line`. */
function invalidUtf8(bytes: Buffer, offset: number, line: number): InvalidUtf8 {
  let lo = 0,
    hi = bytes.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const prefix = bytes.subarray(0, mid);
    if (isUtf8(prefix.subarray(0, prefix.length - incompleteTail(prefix)))) lo = mid;
    else hi = mid;
  }
  // The first `lo` bytes pass, but they may end with the lead of a sequence the next byte breaks
  // (Latin-1 "é" before a space): the bad byte is that lead, not the byte after it.
  const bad = lo - incompleteTail(bytes.subarray(0, lo));
  return new InvalidUtf8(offset + bad, bytes[bad]!, line + countNewlines(bytes.subarray(0, bad)));
}

function datasetError(file: string, collector: Collector): CitiesApiError {
  const located = collector.problems.map((p) => ({ ...p, file }));
  const shown = located.slice(0, MAX_LISTED_PROBLEMS).map((p) => `  ${formatProblem(p)}`);
  const more = collector.total > MAX_LISTED_PROBLEMS ? [`  ... and ${collector.total - MAX_LISTED_PROBLEMS} more`] : [];
  const noun = collector.total === 1 ? 'problem' : 'problems';
  return new CitiesApiError(
    [`invalid dataset ${file} (${collector.total} ${noun}; nothing was written):`, ...shown, ...more].join('\n'),
    1,
    located,
  );
}
