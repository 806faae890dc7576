/**
 * Splits a JSON array into the text of its elements, incrementally over chunks of bytes, so a
 * large dataset is never held as one string or one object graph. Throws JsonShapeError when the
 * bytes are not an array (the caller then reports JSON.parse's own message for the file).
 */
export class JsonShapeError extends Error {}

const OPEN = 0x5b, CLOSE = 0x5d, OBJ_OPEN = 0x7b, OBJ_CLOSE = 0x7d, COMMA = 0x2c, QUOTE = 0x22, BACKSLASH = 0x5c, NEWLINE = 0x0a;
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export class JsonArraySplitter {
  private state: 'start' | 'before-value' | 'value' | 'end' = 'start';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private parts: Buffer[] = [];
  private index = 0;
  private line = 1;
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
      if (this.state === 'value') {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (b === BACKSLASH) this.escaped = true;
          else if (b === QUOTE) this.inString = false;
        } else if (b === QUOTE) this.inString = true;
        else if (b === OBJ_OPEN || b === OPEN) this.depth++;
        else if ((b === OBJ_CLOSE || b === CLOSE) && this.depth > 0) this.depth--;
        else if (this.depth === 0 && (b === COMMA || b === CLOSE)) {
          this.parts.push(chunk.subarray(Math.max(from, 0), i));
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
      } else throw new JsonShapeError(`unexpected byte at offset ${this.offset + i}`);
    }
    if (this.state === 'value') this.parts.push(chunk.subarray(Math.max(from, 0)));
    this.offset += chunk.length;
  }

  end(): void {
    if (this.state !== 'end') throw new JsonShapeError('the array is not closed');
  }

  private emit(): void {
    const text = (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)).toString('utf8');
    this.parts = [];
    this.onElement(text, this.index++, this.startLine);
  }
}
