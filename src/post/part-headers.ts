import { decodeReplacing, lookupCodec } from './python-codecs.js';

// A multipart part's headers as Django's MultiPartParser reads them (Django 3.2): in the part's
// first 1024 bytes, each line split at `;` outside quotes, RFC 2231 parameters decoded.

const MAX_HEADER_BYTES = 1024;

export interface Header {
  readonly value: string;
  /** Bytes as sent; text where an RFC 2231 `name*=charset'lang'value` was decoded. */
  readonly params: ReadonlyMap<string, Buffer | string>;
}

/** A part's kind (no headers: raw), headers by lower-cased name (the last of each), and data. */
export function readPart(part: Buffer): { kind: 'raw' | 'field' | 'file'; headers: Map<string, Header>; data: Buffer } {
  const headers = new Map<string, Header>();
  const end = part.subarray(0, MAX_HEADER_BYTES).indexOf('\r\n\r\n');
  if (end < 0) return { kind: 'raw', headers, data: part };
  let kind: 'raw' | 'field' | 'file' = 'raw';
  for (const line of splitLines(part.subarray(0, end))) {
    const header = parseHeaderLine(line);
    if (!header) continue;
    if (header.name === 'content-disposition') kind = header.params.get('filename')?.length ? 'file' : 'field';
    headers.set(header.name, header);
  }
  return { kind, headers, data: part.subarray(end + 4) };
}

function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  for (let at = 0; ; ) {
    const next = bytes.indexOf('\r\n', at);
    lines.push(bytes.subarray(at, next < 0 ? bytes.length : next));
    if (next < 0) return lines;
    at = next + 2;
  }
}

/**
 * Django's multipart parse_header on one header line: `Name: value; param=...`, the name and
 * value lower-cased; null for a line Django skips (no colon, or non-ASCII where it decodes ASCII).
 */
function parseHeaderLine(line: Buffer): (Header & { name: string }) | null {
  const [main, ...rest] = headerParams(line);
  if (main === undefined || main.some((b) => b >= 0x80)) return null;
  const text = main.toString('latin1').replace(/[A-Z]/g, (c) => c.toLowerCase());
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  const params = new Map<string, Buffer | string>();
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const rawName = asciiStrip(p.subarray(0, eq));
    if (rawName.some((b) => b >= 0x80)) return null;
    let name = rawName.toString('latin1').toLowerCase();
    let value: Buffer | string = asciiStrip(p.subarray(eq + 1));
    if (value.length >= 2 && value[0] === 0x22 && value.at(-1) === 0x22) {
      value = Buffer.from(
        value.subarray(1, -1).toString('latin1').replaceAll('\\\\', '\\').replaceAll('\\"', '"'),
        'latin1',
      );
    }
    if (name.endsWith('*')) {
      name = name.slice(0, -1);
      const pieces = value.toString('latin1').split("'");
      // RFC 2231 `charset'lang'percent-encoded`, decoded when the charset is one of ours.
      const codec = pieces.length === 3 ? lookupCodec(pieces[0]!) : null;
      if (codec) value = decodeReplacing(percentDecoded(pieces[2]!), codec);
    }
    params.set(name, value);
  }
  return { name: text.slice(0, colon), value: text.slice(colon + 1), params };
}

/** `;`-separated parts of a header line (a `;` inside quotes does not split), each stripped. */
function headerParams(line: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let s = Buffer.concat([Buffer.from(';'), line]);
  while (s[0] === 0x3b) {
    s = s.subarray(1);
    let end = s.indexOf(';');
    while (end > 0 && s.subarray(0, end).filter((b) => b === 0x22).length % 2) end = s.indexOf(';', end + 1);
    if (end < 0) end = s.length;
    parts.push(asciiStrip(s.subarray(0, end)));
    s = s.subarray(end);
  }
  return parts;
}

/** The bytes of `%XX` escapes and of the other characters. */
function percentDecoded(text: string): Buffer {
  return Buffer.from(
    text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
}

/** Python's bytes.strip(): ASCII whitespace at both ends. */
export function asciiStrip(bytes: Buffer): Buffer {
  const space = (b: number | undefined) => b === 0x20 || (b !== undefined && b >= 0x09 && b <= 0x0d);
  let start = 0;
  let end = bytes.length;
  while (start < end && space(bytes[start])) start++;
  while (end > start && space(bytes[end - 1])) end--;
  return bytes.subarray(start, end);
}
