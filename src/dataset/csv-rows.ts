import { parse } from 'csv-parse';
import { shortText } from '../core/errors.js';
import { MAX_RECORD_BYTES } from '../core/fields.js';

export interface CsvRow {
  /** Physical line (1-based) where the record starts. */
  readonly line: number;
  readonly values: readonly string[];
}

export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Hands each record of UTF-8 CSV bytes (BOM optional, LF or CRLF, RFC 4180 quoting), read chunk
 * by chunk, to `onRow` with the physical line it starts on, so errors can point at it even after
 * quoted newlines. Rejects with CsvSyntaxError at the record where the syntax breaks, or where a
 * record runs past MAX_RECORD_BYTES (then the rest of the input is not read).
 */
export async function readCsvRows(
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  onRow: (row: CsvRow) => void,
): Promise<void> {
  // Offsets of the newlines not yet behind a finished record, and how many came before them.
  let newlines: number[] = [];
  let forgotten = 0;
  const newlinesBefore = (offset: number) => {
    let lo = 0,
      hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return forgotten + lo;
  };
  const parser = parse({
    bom: true,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    record_delimiter: ['\r\n', '\n'],
  });
  let end = 0;
  let failure: unknown;
  parser.on('data', ({ record, info }: { record: string[]; info: { bytes: number } }) => {
    if (failure) return;
    // The record's last byte is on line 1 + newlines before it; its own newlines (in quoted fields) go back up.
    let inside = 0;
    for (const value of record) for (let i = value.indexOf('\n'); i >= 0; i = value.indexOf('\n', i + 1)) inside++;
    end = info.bytes;
    try {
      onRow({ line: 1 + newlinesBefore(end - 1) - inside, values: record });
    } catch (error) {
      failure = error;
    }
  });
  const done = new Promise<void>((resolve, reject) => {
    parser.on('error', (error) => {
      failure ??= new CsvSyntaxError(
        1 + newlinesBefore(end),
        `CSV syntax error in the record starting here: ${shortQuoted(error.message.replace(/ at line \d+/, ''))}`,
      );
      reject(failure);
    });
    parser.on('end', resolve);
  });
  done.catch(() => {}); // failure is thrown below
  let offset = 0;
  for await (const chunk of chunks) {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) newlines.push(offset + i);
    offset += chunk.length;
    parser.write(chunk);
    if (!failure && offset - end > MAX_RECORD_BYTES) {
      failure = new CsvSyntaxError(
        1 + newlinesBefore(end),
        `the record starting here runs past ${MAX_RECORD_BYTES} bytes without ending (a city takes a few KiB): is this a CSV dataset? (reading stopped here)`,
      );
    }
    if (failure) break;
    const behind = newlinesBefore(end - 1) - forgotten;
    if (behind > 1024) {
      forgotten += behind;
      newlines = newlines.slice(behind);
    }
  }
  if (failure) {
    parser.destroy();
    throw failure;
  }
  parser.end();
  await done;
}

/** csv-parse quotes the field it stopped at (`value is "..."`): long quoted text is cut short. */
function shortQuoted(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.)*"/gs, (quoted) => shortText(quoted));
}
