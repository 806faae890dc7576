import { ROUTES } from '../core/route-table.js';
import { decodeStrict, type Codec } from './python-codecs.js';
import { parseQuery, moreFieldsThan } from '../core/query-string.js';

// An `application/x-www-form-urlencoded` body as Django's QueryDict reads it for DRF's
// FormParser: decoded with the request's charset (Latin-1 when the bytes are not valid in it),
// split as parse_qsl splits, percent-escapes decoded with the charset (bad bytes become U+FFFD),
// at most DATA_UPLOAD_MAX_NUMBER_FIELDS fields.

/** Django's DATA_UPLOAD_MAX_NUMBER_FIELDS: over it Django refuses the body (TooManyFieldsSent, 400). */
export const MAX_FORM_FIELDS = ROUTES.limits.fields;

/** A file part of a multipart body: DRF hands the file itself to the field, whose text is its name. */
export class UploadedFile {
  constructor(readonly name: string) {}
}

/** Field values as DRF's serializer fields get them from a QueryDict: the last value of each name. */
export type FormData = Record<string, string | UploadedFile>;

/** The fields, or null when there are more than Django accepts. */
export function parseUrlencoded(body: Buffer, codec: Codec): FormData | null {
  const text = decodeStrict(body, codec) ?? body.toString('latin1');
  if (moreFieldsThan(text, MAX_FORM_FIELDS)) return null;
  const pairs = parseQuery(asUtf8Escapes(text, codec));
  const data: FormData = Object.create(null) as FormData;
  for (const [name, value] of pairs) data[name] = value;
  return data;
}

/**
 * Rewrites percent-escapes of bytes 0x80-0xFF so that decoding them as UTF-8 (what parseQuery
 * does) gives what the charset gives: Latin-1 maps byte B to U+00B, ASCII refuses it (U+FFFD).
 */
function asUtf8Escapes(text: string, codec: Codec): string {
  if (codec === 'utf-8') return text;
  return text.replace(/%[89a-fA-F][0-9a-fA-F]/g, (escape) =>
    codec === 'ascii' ? '%EF%BF%BD' : encodeURIComponent(String.fromCharCode(parseInt(escape.slice(1), 16))),
  );
}
