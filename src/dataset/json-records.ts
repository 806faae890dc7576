import { MAX_RECORD_BYTES } from '../core/fields.js';

/** Why the bytes are not a JSON array of records, and the line where that shows. */
export class JsonShapeError extends Error {
  constructor(
    readonly line: number,
    reason: string,
    readonly index?: number,
  ) {
    super(reason);
  }
}

const OPEN = 0x5b,
  CLOSE = 0x5d,
  OBJ_OPEN = 0x7b,
  OBJ_CLOSE = 0x7d,
  COMMA = 0x2c,
  QUOTE = 0x22,
  BACKSLASH = 0x5c,
  NEWLINE = 0x0a;
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Splits a JSON array into the text of its elements, incrementally over chunks of bytes, so a
 * large dataset is never held as one string or one object graph, nor one element past
 * MAX_RECORD_BYTES. Throws JsonShapeError when the bytes are not such an array.
 */
export class JsonArraySplitter {
  private state: 'start' | 'before-value' | 'value' | 'end' = 'start';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private parts: Buffer[] = [];
  private size = 0;
  private index = 0;
  private line = 1;
  /** The line of the last byte that was not whitespace. */
  private lastLine = 1;
  private startLine = 1;
  private offset = 0;
  /** How many bytes of a leading BOM were skipped. */
  private bom = 0;

  /** `onElement` gets each element's text, its index, and the line it starts on. */
  constructor(private readonly onElement: (text: string, index: number, line: number) => void) {}

  push(chunk: Buffer): void {
    let from = -1;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.bom === this.offset + i && b === BOM[this.bom]) {
        this.bom++;
        continue;
      }
      if (b === NEWLINE) this.line++;
      else if (!isSpace(b)) this.lastLine = this.line;
      if (this.state === 'value') {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (b === BACKSLASH) this.escaped = true;
          else if (b === QUOTE) this.inString = false;
        } else if (b === QUOTE) this.inString = true;
        else if (b === OBJ_OPEN || b === OPEN) this.depth++;
        else if ((b === OBJ_CLOSE || b === CLOSE) && this.depth > 0) this.depth--;
        else if (this.depth === 0 && (b === COMMA || b === CLOSE)) {
          this.take(chunk.subarray(Math.max(from, 0), i));
          this.emit();
          from = -1;
          this.state = b === COMMA ? 'before-value' : 'end';
        }
      } else if (isSpace(b)) continue;
      else if (this.state === 'start' && b === OPEN) this.state = 'before-value';
      else if (this.state === 'before-value' && b === CLOSE && this.index === 0) this.state = 'end';
      else if (this.state === 'before-value' && b !== COMMA && b !== CLOSE) {
        this.state = 'value';
        this.startLine = this.line;
        from = i--;
      } else throw this.unexpected(b);
    }
    if (this.state === 'value') this.take(chunk.subarray(Math.max(from, 0)));
    this.offset += chunk.length;
  }

  end(): void {
    if (this.state === 'end') return;
    if (this.state === 'value') {
      // Cut short inside an element: JSON.parse says what is wrong with what there is of it.
      const text = Buffer.concat(this.parts).toString('utf8');
      throw (
        elementSyntaxError(text, this.startLine, this.index) ??
        new JsonShapeError(this.lastLine, 'is not valid JSON: Unexpected end of JSON input')
      );
    }
    throw new JsonShapeError(
      this.lastLine,
      `is not valid JSON: Unexpected end of JSON input (${this.state === 'start' ? 'no array' : 'the array is not closed'})`,
    );
  }

  private unexpected(b: number): JsonShapeError {
    const what = b >= 0x21 && b <= 0x7e ? `"${String.fromCharCode(b)}"` : `byte 0x${b.toString(16).padStart(2, '0')}`;
    if (this.state === 'start') {
      const value =
        b === OBJ_OPEN ||
        b === QUOTE ||
        b === 0x2d ||
        (b >= 0x30 && b <= 0x39) ||
        b === 0x74 ||
        b === 0x66 ||
        b === 0x6e;
      return new JsonShapeError(
        this.line,
        value
          ? 'must hold a JSON array of city objects'
          : `is not valid JSON: unexpected ${what} where the array should begin`,
      );
    }
    return new JsonShapeError(
      this.line,
      `is not valid JSON: unexpected ${what} ${this.state === 'end' ? 'after the array' : 'where a record should begin'}`,
    );
  }

  private take(part: Buffer): void {
    this.parts.push(part);
    this.size += part.length;
    if (this.size > MAX_RECORD_BYTES) {
      throw new JsonShapeError(
        this.startLine,
        `is longer than ${MAX_RECORD_BYTES} bytes (a city takes a few KiB): is this a city dataset? (reading stopped here)`,
        this.index,
      );
    }
  }

  private emit(): void {
    const text = (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)).toString('utf8');
    this.parts = [];
    this.size = 0;
    this.onElement(text, this.index++, this.startLine);
  }
}

/**
 * JSON.parse's account of what is wrong with the text of element `index` starting on `line`,
 * located on the line where it stopped, on one line, or null when the text parses.
 */
export function elementSyntaxError(text: string, line: number, index?: number): JsonShapeError | null {
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    const message = (error as Error).message;
    const offset = syntaxErrorOffset(message, text);
    const before = text.slice(0, offset ?? text.trimEnd().length);
    let newlines = 0;
    for (let i = before.indexOf('\n'); i >= 0; i = before.indexOf('\n', i + 1)) newlines++;
    // V8 counts positions (and Node 22 lines and columns) from the element's start, not the file's.
    const reason = message
      .replace(/ at position (\d+)(?: \(line \d+ column \d+\))?/, ' at position $1 of the record')
      .replace(/[\n\r\t]/g, (c) => JSON.stringify(c).slice(1, -1));
    return new JsonShapeError(line + newlines, `is not valid JSON: ${reason}`, index);
  }
}

/** Where JSON.parse stopped in `text`: its `position N`, else where the 10 characters either side it quotes are. */
function syntaxErrorOffset(message: string, text: string): number | undefined {
  const position = / at position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  const context = /, (\.\.\.)?"([^]*)"(\.\.\.)? is not valid JSON$/.exec(message);
  const at = context ? text.indexOf(context[2]!) : -1;
  if (at < 0 || !(context![1] || context![3])) return undefined;
  return context![1] ? at + 10 : at + context![2]!.length - 10;
}
