import { parse } from 'csv-parse';

export interface CsvRow {
  /** Physical line (1-based) where the record starts. */
  readonly line: number;
  readonly values: readonly string[];
}

export class CsvSyntaxError extends Error {
  constructor(readonly line: number, message: string) {
    super(message);
  }
}

/**
 * Hands each record of a UTF-8 CSV buffer (BOM optional, LF or CRLF, RFC 4180 quoting) to
 * `onRow` with the physical line it starts on, so errors can point at it even after quoted
 * newlines. Rejects with CsvSyntaxError at the record where the syntax breaks.
 */
export function readCsvRows(buffer: Buffer, onRow: (row: CsvRow) => void): Promise<void> {
  const newlines: number[] = [];
  for (let i = buffer.indexOf(10); i >= 0; i = buffer.indexOf(10, i + 1)) newlines.push(i);
  const lineAt = (offset: number) => {
    while (offset < buffer.length && (buffer[offset] === 10 || buffer[offset] === 13)) offset++;
    let lo = 0, hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
  return new Promise((resolve, reject) => {
    let end = 0;
    const parser = parse({ bom: true, info: true, relax_column_count: true, skip_empty_lines: true, record_delimiter: ['\r\n', '\n'] });
    parser.on('data', ({ record, info }: { record: string[]; info: { bytes: number } }) => {
      try {
        onRow({ line: lineAt(end), values: record });
      } catch (error) {
        parser.destroy();
        reject(error);
      }
      end = info.bytes;
    });
    parser.on('error', (error) => reject(new CsvSyntaxError(lineAt(end), `CSV syntax error in the record starting here: ${error.message.replace(/ at line \d+/, '')}`)));
    parser.on('end', resolve);
    parser.end(buffer);
  });
}
