// The three text encodings a POST body is decoded with, as Python decodes them: charset names
// looked up as Python's codecs.lookup() does (Django uses the request's charset only when Python
// knows it), strict decoding with Python's messages, and decoding with errors='replace'.

export type Codec = 'utf-8' | 'latin-1' | 'ascii';

/** Python's encodings.aliases for the three codecs (the codecs' own module names are utf_8, latin_1, ascii). */
const ALIASES: Readonly<Record<Codec, readonly string[]>> = {
  'utf-8': ['u8', 'utf', 'utf8', 'utf8_ucs2', 'utf8_ucs4', 'cp65001'],
  'latin-1': [
    '8859',
    'cp819',
    'csisolatin1',
    'ibm819',
    'iso8859',
    'iso8859_1',
    'iso_8859_1',
    'iso_8859_1_1987',
    'iso_ir_100',
    'l1',
    'latin',
    'latin1',
  ],
  ascii: [
    '646',
    'ansi_x3.4_1968',
    'ansi_x3.4_1986',
    'ansi_x3_4_1968',
    'cp367',
    'csascii',
    'ibm367',
    'iso646_us',
    'iso_646.irv_1991',
    'iso_ir_6',
    'us',
    'us_ascii',
  ],
};
const BY_ALIAS = new Map(
  Object.entries(ALIASES).flatMap(([codec, names]) => names.map((name) => [name, codec as Codec])),
);
const BY_MODULE = new Map<string, Codec>([
  ['utf_8', 'utf-8'],
  ['latin_1', 'latin-1'],
  ['ascii', 'ascii'],
]);

/**
 * The codec Python's codecs.lookup(name) finds, when it is one of these three; null for any
 * other name (another codec, or none). Python lower-cases the name, then encodings'
 * normalize_encoding() turns each run of other characters than letters, digits and `.` into
 * one `_` (dropping non-ASCII letters and digits), then the alias table and the module names
 * are searched.
 */
export function lookupCodec(name: string): Codec | null {
  let normalized = '';
  let punct = false;
  for (const c of name.replace(/[A-Z]/g, (l) => l.toLowerCase())) {
    if (/[\p{L}\p{N}.]/u.test(c)) {
      if (punct && normalized) normalized += '_';
      if (c < '\x80') normalized += c;
      punct = false;
    } else punct = true;
  }
  // An alias is also found with its dots as underscores; a module name only as it is.
  return BY_ALIAS.get(normalized) ?? BY_ALIAS.get(normalized.replaceAll('.', '_')) ?? BY_MODULE.get(normalized) ?? null;
}

/** bytes.decode(codec) with Python's UnicodeDecodeError message; a text that decodes. */
export class PyDecodeError extends Error {}

/**
 * Decodes as Python's codecs.getreader(codec)(stream).read() does (what DRF's JSONParser reads):
 * strict, except that an incomplete UTF-8 sequence at the very end is silently left unread.
 */
export function decodeStream(bytes: Buffer, codec: Codec): string {
  if (codec === 'latin-1') return bytes.toString('latin1');
  if (codec === 'ascii') {
    const bad = bytes.findIndex((b) => b >= 0x80);
    if (bad >= 0)
      throw new PyDecodeError(
        `'ascii' codec can't decode byte 0x${hex(bytes[bad]!)} in position ${bad}: ordinal not in range(128)`,
      );
    return bytes.toString('latin1');
  }
  let i = 0;
  while (i < bytes.length) {
    const length = utf8Sequence(bytes, i);
    if (length > 0) i += length;
    else if (length === INCOMPLETE) return bytes.subarray(0, i).toString('utf8');
    else {
      const invalid = -length;
      const reason = invalid === 1 && !isLead(bytes[i]!) ? 'invalid start byte' : 'invalid continuation byte';
      throw new PyDecodeError(
        invalid === 1
          ? `'utf-8' codec can't decode byte 0x${hex(bytes[i]!)} in position ${i}: ${reason}`
          : `'utf-8' codec can't decode bytes in position ${i}-${i + invalid - 1}: ${reason}`,
      );
    }
  }
  return bytes.toString('utf8');
}

/** bytes.decode(codec, errors='replace'): each invalid sequence becomes one U+FFFD. */
export function decodeReplacing(bytes: Buffer | Uint8Array, codec: Codec): string {
  if (codec === 'latin-1') return Buffer.from(bytes).toString('latin1');
  if (codec === 'ascii')
    return Buffer.from(bytes)
      .toString('latin1')
      .replace(/[\x80-\xff]/g, '\uFFFD');
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
}

/** bytes.decode(codec) in strict mode: null where Python raises. */
export function decodeStrict(bytes: Buffer, codec: Codec): string | null {
  if (codec === 'latin-1') return bytes.toString('latin1');
  if (codec === 'ascii') return bytes.some((b) => b >= 0x80) ? null : bytes.toString('latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

const INCOMPLETE = 0;
const hex = (b: number) => b.toString(16).padStart(2, '0');
const isLead = (b: number) => b >= 0xc2 && b <= 0xf4;

/**
 * The length of the valid UTF-8 sequence at `i`; INCOMPLETE when the bytes end inside one;
 * otherwise minus the number of bytes Python reports as invalid (the lead and the continuation
 * bytes that were valid before the one that is not).
 */
function utf8Sequence(bytes: Buffer, i: number): number {
  const lead = bytes[i]!;
  if (lead < 0x80) return 1;
  if (!isLead(lead)) return -1;
  const need = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  // The second byte's range depends on the lead (no overlongs, no surrogates, nothing past U+10FFFF).
  const [low, high] =
    lead === 0xe0
      ? [0xa0, 0xbf]
      : lead === 0xed
        ? [0x80, 0x9f]
        : lead === 0xf0
          ? [0x90, 0xbf]
          : lead === 0xf4
            ? [0x80, 0x8f]
            : [0x80, 0xbf];
  for (let k = 1; k < need; k++) {
    if (i + k >= bytes.length) return INCOMPLETE;
    const b = bytes[i + k]!;
    const ok = k === 1 ? b >= low && b <= high : b >= 0x80 && b <= 0xbf;
    if (!ok) return -k;
  }
  return need;
}
