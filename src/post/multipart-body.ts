import { MAX_FORM_FIELDS, UploadedFile, type FormData } from './form-body.js';
import type { MediaType } from '../core/negotiate.js';
import { decodeReplacing, lookupCodec, type Codec } from './python-codecs.js';
import { pyStrip } from '../core/python-text.js';

// A `multipart/form-data` body as Django's MultiPartParser reads it for DRF (Django 3.2, the
// whole body in one chunk, as a body of at most 64 KiB is): split at each `--boundary` (the CRLF
// before it dropped), each part's headers in its first 1024 bytes, fields decoded with the
// request's charset (bad bytes become U+FFFD), base64 parts decoded, file parts handed to
// the serializer as files.

/** Django's DATA_UPLOAD_MAX_NUMBER_FILES. */
const MAX_FILES = 100;
const MAX_HEADER_BYTES = 1024;
const VALID_BOUNDARY = /^[ -~]{0,200}[!-~]$/;

export type MultipartResult = { readonly data: FormData } | { readonly error: string } | { readonly tooMany: true };

export function parseMultipart(body: Buffer, rawType: string, type: MediaType, codec: Codec): MultipartResult {
  if (!rawType.startsWith('multipart/')) return { error: `Invalid Content-Type: ${rawType}` };
  if (/[^\x00-\x7f]/.test(rawType)) return { error: `Invalid non-ASCII Content-Type in multipart: ${rawType}` };
  const boundary = type.params.get('boundary');
  if (!boundary || !VALID_BOUNDARY.test(boundary))
    return { error: `Invalid boundary in multipart: ${boundary ?? 'None'}` };
  const fields = new Map<string, string>();
  const files = new Map<string, UploadedFile>();
  let counted = 0;
  let fileCount = 0;
  for (const part of splitParts(body, Buffer.from(`--${boundary}`, 'latin1'))) {
    const { kind, headers, data } = readPart(part);
    // Parts without headers count too: Django allows two of them (before the first boundary, after the last).
    if (kind !== 'file' && ++counted > MAX_FORM_FIELDS + 2) return { tooMany: true };
    if (kind === 'file' && ++fileCount > MAX_FILES) return { tooMany: true };
    const disposition = headers.get('content-disposition')?.params;
    const rawName = disposition?.get('name');
    if (rawName === undefined) continue;
    const name = typeof rawName === 'string' ? pyStrip(rawName) : decodeReplacing(asciiStrip(rawName), codec);
    const base64 = headers.get('content-transfer-encoding')?.value.trim() === 'base64';
    if (kind === 'field') {
      fields.set(name, decodeReplacing(base64 ? (decodeBase64(data) ?? data) : data, codec));
    } else {
      const rawFile = disposition!.get('filename')!;
      const fileName = fileNameOf(typeof rawFile === 'string' ? rawFile : decodeReplacing(rawFile, codec));
      if (!fileName) continue;
      if (base64 && decodeBase64(data) === null) return { error: 'Could not decode base64 data.' };
      files.set(name, new UploadedFile(fileName));
    }
  }
  // DRF adds the files after the fields: a name given both ways is the file.
  const data: FormData = Object.create(null) as FormData;
  for (const [name, value] of fields) data[name] = value;
  for (const [name, file] of files) data[name] = file;
  return { data };
}

/** The parts between boundaries (the text before the first one and after the last included). */
function splitParts(body: Buffer, separator: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const found = body.indexOf(separator, at);
    if (found < 0) {
      parts.push(body.subarray(at));
      break;
    }
    let end = found;
    if (end > at && body[end - 1] === 0x0a) end--;
    if (end > at && body[end - 1] === 0x0d) end--;
    parts.push(body.subarray(at, end));
    at = found + separator.length;
  }
  return parts;
}

interface Header {
  readonly value: string;
  /** Bytes as sent; text where an RFC 2231 `name*=charset'lang'value` was decoded. */
  readonly params: ReadonlyMap<string, Buffer | string>;
}

/** A part's kind (no headers: raw), headers by lower-cased name (the last of each), and data. */
function readPart(part: Buffer): { kind: 'raw' | 'field' | 'file'; headers: Map<string, Header>; data: Buffer } {
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
function asciiStrip(bytes: Buffer): Buffer {
  const space = (b: number | undefined) => b === 0x20 || (b !== undefined && b >= 0x09 && b <= 0x0d);
  let start = 0;
  let end = bytes.length;
  while (start < end && space(bytes[start])) start++;
  while (end > start && space(bytes[end - 1])) end--;
  return bytes.subarray(start, end);
}

/**
 * Django's sanitize_file_name: HTML character references resolved (numeric ones and the XML
 * five; Python's full HTML5 table is not carried), the part after the last `/` or `\`; none for
 * an empty name, `.` or `..`. Then UploadedFile's limit of 255 characters, the extension kept.
 */
function fileNameOf(raw: string): string | null {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  const unescaped = raw.replace(
    /&(?:#[xX]([0-9a-fA-F]+)|#(\d+)|(amp|lt|gt|quot|apos));/g,
    (_whole, hex: string, dec: string, name: string) => {
      if (name) return named[name]!;
      const code = parseInt(hex ?? dec, hex ? 16 : 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\uFFFD';
    },
  );
  const name = unescaped.split('/').at(-1)!.split('\\').at(-1)!;
  if (name === '' || name === '.' || name === '..') return null;
  const chars = [...name];
  if (chars.length <= 255) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? [...name.slice(dot)].slice(0, 255) : [];
  return [...chars.slice(0, 255 - ext.length), ...ext].join('');
}

/** Python's base64.b64decode(data) (not validating): other characters skipped; null where it raises. */
function decodeBase64(data: Buffer): Buffer | null {
  const alphabet = data.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, '');
  let quad = 0;
  let pads = 0;
  let kept = '';
  for (const c of alphabet) {
    if (c === '=') {
      if (quad >= 2 && quad + ++pads >= 4) return Buffer.from(kept, 'base64');
      continue;
    }
    pads = 0;
    kept += c;
    quad = (quad + 1) % 4;
  }
  return quad === 0 ? Buffer.from(kept, 'base64') : null;
}
