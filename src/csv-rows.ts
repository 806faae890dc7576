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
 * Records of a UTF-8 CSV buffer (BOM optional, LF or CRLF, RFC 4180 quoting) with the physical
 * line each starts on, so errors can point at it even after quoted newlines.
 */
export async function* csvRows(buffer: Buffer): AsyncGenerator<CsvRow> {
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
  const parser = parse({
    bom: true,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    record_delimiter: ['\r\n', '\n'],
  });
  parser.end(buffer);
  let end = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      yield { line: lineAt(end), values: record };
      end = info.bytes;
    }
  } catch (error) {
    const reason = (error as Error).message.replace(/ at line \d+/, '').replace(/^[A-Za-z ]+: /, '');
    throw new CsvSyntaxError(lineAt(end), `CSV syntax error in the record starting here: ${reason}`);
  }
}
