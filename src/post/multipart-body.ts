import { MAX_FORM_FIELDS, UploadedFile, type FormData } from './form-body.js';
import type { MediaType } from '../core/negotiate.js';
import { decodeReplacing, type Codec } from './python-codecs.js';
import { asciiStrip, readPart } from './part-headers.js';
import { pyStrip } from '../core/python-text.js';

// A `multipart/form-data` body as Django's MultiPartParser reads it for DRF (Django 3.2, the
// whole body in one chunk, as a body of at most 64 KiB is): split at each `--boundary` (the CRLF
// before it dropped), each part's headers in its first 1024 bytes (part-headers.ts), fields
// decoded with the request's charset (bad bytes become U+FFFD), base64 parts decoded, file parts
// handed to the serializer as files.

/** Django's DATA_UPLOAD_MAX_NUMBER_FILES. */
const MAX_FILES = 100;
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
