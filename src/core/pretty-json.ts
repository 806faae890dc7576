// Compact JSON laid out as Python's json.dumps(indent=n, separators=(',', ': ')) does, touching
// only whitespace so every token keeps its exact spelling; for the browsable page also escaped
// for HTML, with every http(s) URL string a link. It works on UTF-8 bytes given in parts split
// anywhere (JSON's structural characters are ASCII, never inside a multi-byte character), so an
// answer of any size is transformed part by part, never held whole.

import { concatBytes, fromUtf8, utf8, type Bytes } from './bytes.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const [OPEN_OBJECT, CLOSE_OBJECT, OPEN_LIST, CLOSE_LIST, COMMA, COLON] = [0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a];
/** Per byte: its HTML entity, for the five characters escaped. */
const HTML_ESCAPES: (Bytes | undefined)[] = [];
for (const c of '&<>"\'') HTML_ESCAPES[c.charCodeAt(0)] = utf8(`&#${c.charCodeAt(0)};`);
const URL_STRING = /^"(https?:\/\/[^"\\\s]+)"$/;

export type PrettyMode = 'json' | 'html';

/** One transformation in progress: push() the input's parts in order, then end(). */
export class PrettyJson {
  private depth = 0;
  /** The string token being read (opening quote included), kept until it closes. */
  private string: Bytes[] | null = null;
  private escaped = false;
  /** `{` or `[` just read: whether the container is empty depends on the next byte. */
  private open = 0;
  private out: Bytes = new Uint8Array(0);
  private at = 0;
  private readonly pads: Bytes[] = [];

  constructor(
    private readonly indent: number,
    private readonly mode: PrettyMode = 'json',
  ) {}

  /** The output for `input`, up to what the bytes read so far decide. */
  push(input: Bytes): Bytes {
    this.out = new Uint8Array(Math.max(64, input.length * 2));
    this.at = 0;
    let i = 0;
    while (i < input.length) {
      if (this.string) {
        i = this.readString(input, i);
        continue;
      }
      const c = input[i++]!;
      if (this.open) {
        const open = this.open;
        this.open = 0;
        if (c === (open === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_LIST)) {
          this.write(open, c);
          continue;
        }
        this.write(open);
        this.copy(this.pad(++this.depth));
      }
      if (c === QUOTE) i = this.readString(input, i - 1);
      else if (c === OPEN_OBJECT || c === OPEN_LIST) this.open = c;
      else if (c === CLOSE_OBJECT || c === CLOSE_LIST) {
        this.copy(this.pad(--this.depth));
        this.write(c);
      } else if (c === COMMA) {
        this.write(c);
        this.copy(this.pad(this.depth));
      } else if (c === COLON) this.write(c, 0x20);
      else this.write(c);
    }
    return this.out.subarray(0, this.at);
  }

  /** What is left: a `{` or `[` at the very end of (malformed) input. */
  end(): Bytes {
    return this.open ? concatBytes([Uint8Array.of(this.open), this.pad(++this.depth)]) : new Uint8Array(0);
  }

  /**
   * Reads a string token from `start` (its opening quote, or where the input resumes inside it) up
   * to its closing quote, then writes it; a token the input ends inside is kept for the next part.
   */
  private readString(input: Bytes, start: number): number {
    let i = this.string ? start : start + 1;
    for (; i < input.length; i++) {
      const c = input[i]!;
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) {
        if (!this.string) this.writeString(input, start, i + 1);
        else {
          const token = concatBytes([...this.string, input.subarray(start, i + 1)]);
          this.string = null;
          this.writeString(token, 0, token.length);
        }
        return i + 1;
      }
    }
    (this.string ??= []).push(input.subarray(start));
    return i;
  }

  /** Writes the string token at bytes [start, end) of `bytes`. */
  private writeString(bytes: Bytes, start: number, end: number): void {
    this.room((end - start) * 6); // at most an entity of 5 bytes per byte
    const out = this.out;
    let at = this.at;
    if (this.mode === 'html') {
      const http = end - start > 8 && bytes[start + 1] === 0x68 && fromUtf8(bytes, start + 1, start + 5) === 'http';
      const url = http ? URL_STRING.exec(fromUtf8(bytes, start, end)) : null;
      if (url) {
        const link = escapeHtml(url[1]!);
        return this.copy(utf8(`"<a href="${link}" rel="nofollow">${link}</a>"`));
      }
      for (let i = start; i < end; i++) {
        const entity = HTML_ESCAPES[bytes[i]!];
        if (!entity) out[at++] = bytes[i]!;
        else for (let k = 0; k < entity.length; k++) out[at++] = entity[k]!;
      }
    } else for (let i = start; i < end; i++) out[at++] = bytes[i]!;
    this.at = at;
  }

  private pad(depth: number): Bytes {
    return (this.pads[depth] ??= utf8(`\n${' '.repeat(this.indent * depth)}`));
  }

  private room(n: number): void {
    if (this.at + n <= this.out.length) return;
    const bigger = new Uint8Array(Math.max(this.out.length * 2, this.at + n));
    bigger.set(this.out.subarray(0, this.at));
    this.out = bigger;
  }

  private write(a: number, b?: number): void {
    this.room(2);
    this.out[this.at++] = a;
    if (b !== undefined) this.out[this.at++] = b;
  }

  private copy(bytes: Bytes): void {
    this.room(bytes.length);
    this.out.set(bytes, this.at);
    this.at += bytes.length;
  }
}

/** All of `parts` transformed, as a sequence of parts (one per input part with output). */
export function* prettyParts(parts: Iterable<Bytes>, indent: number, mode: PrettyMode = 'json'): Generator<Bytes> {
  const pretty = new PrettyJson(indent, mode);
  for (const part of parts) {
    const out = pretty.push(part);
    if (out.length) yield out;
  }
  const rest = pretty.end();
  if (rest.length) yield rest;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
