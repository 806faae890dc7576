import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileSystemError } from '../fs/fs-error.js';
import { DATASET_ROLE } from './sample.js';
import { datasetHash, digestFile } from './dataset-digest.js';
import { CityTable } from '../core/city-table.js';
import { CitiesApiError, shortText, type Problem } from '../core/errors.js';
import { Collector } from './dataset-problems.js';
import { readCsvRecords, readJsonRecords } from './dataset-records.js';
import { InvalidUtf8, utf8Chunks } from './utf8-chunks.js';

export { MAX_LISTED_PROBLEMS } from './dataset-problems.js';

export interface ReadOptions {
  /** Called after each chunk with the bytes read so far and the file's size. */
  readonly onProgress?: (bytesRead: number, bytes: number) => void;
  /** Stops reading (its reason thrown) once aborted. */
  readonly signal?: AbortSignal | undefined;
  /** Called with the file's digest (datasetHash) once it is read whole and valid. */
  readonly onDigest?: (digest: Buffer) => void;
  /** How messages name the file: the path as the user gave it (default: `file`). */
  readonly shownAs?: string | undefined;
  /** Refuse columns (CSV) or keys (JSON) that are not city fields; by default they are ignored, with one warning. */
  readonly strict?: boolean | undefined;
  /** Told the warning naming the ignored columns or keys (once, before any error is thrown). */
  readonly onWarning?: ((warning: Problem) => void) | undefined;
}

/**
 * Reads and validates a dataset (`.csv` or `.json`) chunk by chunk into a compact CityTable.
 * An invalid dataset is refused as a whole: one CitiesApiError listing every problem with
 * file, line or record, field, value and reason.
 */
export async function readDataset(file: string, options: ReadOptions = {}): Promise<CityTable> {
  const name = options.shownAs ?? file;
  const format = await checkDatasetFile(file, name);
  const collector = new Collector();
  const size = options.onProgress ? (await stat(file)).size : 0;
  const hash = options.onDigest && datasetHash(format);
  const chunks = utf8Chunks(file, (read, chunk) => {
    options.signal?.throwIfAborted();
    options.onProgress?.(read, Math.max(size, read));
    hash?.update(chunk);
  });
  const strict = options.strict ?? false;
  try {
    if (format === '.csv') await readCsvRecords(chunks, collector, strict);
    else await readJsonRecords(chunks, collector, strict);
  } catch (error) {
    if (!(error instanceof InvalidUtf8)) throw await fileSystemError(error, DATASET_ROLE, file, name);
    collector.problem({
      line: error.line,
      reason: notUtf8(error.byte, error.offset),
    });
  }
  const warning = collector.warning(name, format === '.csv' ? 'column' : 'key');
  if (warning) options.onWarning?.(warning);
  if (collector.total) throw collector.error(name);
  if (hash) options.onDigest!(hash.digest());
  return CityTable.of(collector.table.finish());
}

/** Why a dataset's bytes were refused: the first bad byte, and where UTF-16's byte-order mark begins the file, what to do. */
function notUtf8(byte: number, offset: number): string {
  const utf16 = offset === 0 && (byte === 0xff || byte === 0xfe);
  return `is not valid UTF-8 (byte 0x${byte.toString(16)} at offset ${offset})${utf16 ? '; it begins as UTF-16 text does (a byte-order mark): save it as UTF-8' : ''}`;
}

/** The digest of a dataset file (datasetHash), refused as readDataset refuses it; nothing parsed. */
export async function datasetDigest(
  file: string,
  options: Pick<ReadOptions, 'onProgress' | 'signal' | 'shownAs'> = {},
): Promise<Buffer> {
  const format = await checkDatasetFile(file, options.shownAs);
  const size = options.onProgress ? (await stat(file)).size : 0;
  return digestFile(file, format, (read) => {
    options.signal?.throwIfAborted();
    options.onProgress?.(read, Math.max(size, read));
  }).catch(async (error: unknown) => {
    throw await fileSystemError(error, DATASET_ROLE, file, options.shownAs);
  });
}

/**
 * The dataset file's format, once it is known to be a regular `.csv` or `.json` file: a device,
 * FIFO or directory (`/dev/zero` behind a `.csv` link) is refused before anything is read.
 */
export async function checkDatasetFile(file: string, name = file): Promise<'.csv' | '.json'> {
  const format = extname(file).toLowerCase();
  // A directory is said to be one, whatever its name.
  if (format !== '.csv' && format !== '.json' && !(await stat(file).catch(() => null))?.isDirectory()) {
    throw new CitiesApiError(
      `${name}: unsupported dataset type "${shortText(format) || '(none)'}": use a .csv or .json file`,
    );
  }
  const info = await stat(file).catch(async (error: unknown) => {
    throw await fileSystemError(error, DATASET_ROLE, file, name);
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
      `cannot read dataset ${name}: it is ${kind}; give the path of a regular .csv or .json file`,
    );
  }
  return format as '.csv' | '.json';
}
