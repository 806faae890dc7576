import { compareCodePoints } from './codepoint.js';

/** One `name=value` pair of a query string, percent-decoded. */
export type QueryPair = readonly [name: string, value: string];

/** As Python's decode: a leading U+FEFF is kept (TextDecoder drops it by default). */
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * Python's `urllib.parse.parse_qsl(qs, keep_blank_values=True)`, as Django reads `request.GET`:
 * split on `&`, skip empty fields, a name without `=` gets an empty value, `+` is a space,
 * percent-escapes are UTF-8 with invalid bytes replaced by U+FFFD.
 */
export function parseQuery(qs: string): QueryPair[] {
  const pairs: QueryPair[] = [];
  // Field by field in place (no array of fields made first: every request with a query is read
  // here). `eq`: the next `=` at or after the field (the length when none is left), so that the
  // whole query is scanned once, whatever its fields.
  let eq = -1;
  for (let start = 0; start < qs.length; ) {
    let end = qs.indexOf('&', start);
    if (end < 0) end = qs.length;
    if (end > start) {
      if (eq < start) {
        eq = qs.indexOf('=', start);
        if (eq < 0) eq = qs.length;
      }
      const named = eq < end;
      pairs.push([unquotePlus(qs.slice(start, named ? eq : end)), named ? unquotePlus(qs.slice(eq + 1, end)) : '']);
    }
    start = end + 1;
  }
  return pairs;
}

/** Number of fields Django counts against DATA_UPLOAD_MAX_NUMBER_FIELDS (`&` count + 1). */
export function queryFieldCount(qs: string): number {
  if (!qs) return 0;
  let n = 1;
  for (let i = qs.indexOf('&'); i >= 0; i = qs.indexOf('&', i + 1)) n++;
  return n;
}

/** Python's `unquote_plus`: `+` is a space, then as `unquote`. */
export function unquotePlus(s: string): string {
  return unquote(s.includes('+') ? s.replaceAll('+', ' ') : s);
}

/** Python's `unquote`: only runs of ASCII are percent-decoded (UTF-8, bad bytes → U+FFFD); other characters pass through. */
export function unquote(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(/[\x00-\x7f]+/g, (ascii) => (ascii.includes('%') ? decodeAsciiRun(ascii) : ascii));
}

function decodeAsciiRun(ascii: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < ascii.length; i++) {
    const c = ascii.charCodeAt(i);
    if (c === 37 && i + 2 < ascii.length && isHex(ascii.charCodeAt(i + 1)) && isHex(ascii.charCodeAt(i + 2))) {
      bytes.push(parseInt(ascii.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(c);
    }
  }
  return utf8.decode(Uint8Array.from(bytes));
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** The value Django's `QueryDict.get(name)` returns: the last one given, or undefined. */
export function lastValue(pairs: readonly QueryPair[], name: string): string | undefined {
  for (let i = pairs.length - 1; i >= 0; i--) if (pairs[i]![0] === name) return pairs[i]![1];
  return undefined;
}

/**
 * DRF's `replace_query_param` / `remove_query_param`: group values by name (first-seen order,
 * values in order), set or drop `name`, then `urlencode(sorted(...), doseq=True)`.
 */
export function withParam(pairs: readonly QueryPair[], name: string, value: string | null): string {
  return paramSetter(pairs, name)(value);
}

/** withParam() for one `pairs` and `name` and any value: the other pairs grouped, sorted and encoded once. */
export function paramSetter(pairs: readonly QueryPair[], name: string): (value: string | null) => string {
  const groups = new Map<string, string[]>();
  for (const [k, v] of pairs) {
    if (k === name) continue;
    const list = groups.get(k);
    if (list) list.push(v);
    else groups.set(k, [v]);
  }
  const names = sortedNames([...groups.keys()]);
  // The fields before `name` and after it, as strings grown in place (no arrays joined).
  let head = '';
  let tail = '';
  for (const k of names) {
    const before = compareCodePoints(k, name) < 0;
    const quoted = quotePlus(k);
    for (const v of groups.get(k)!) {
      const field = `${quoted}=${quotePlus(v)}`;
      if (before) head = head ? `${head}&${field}` : field;
      else tail = tail ? `${tail}&${field}` : field;
    }
  }
  const key = `${quotePlus(name)}=`;
  const without = head && tail ? `${head}&${tail}` : head || tail;
  return (value) => {
    if (value === null) return without;
    const set = key + quotePlus(value);
    return (head ? `${head}&` : '') + set + (tail ? `&${tail}` : '');
  };
}

/** Distinct names in code point order: a few (most queries) sorted in place, more by Array.sort. */
function sortedNames(names: string[]): string[] {
  if (names.length > 8) return names.sort(compareCodePoints);
  for (let i = 1; i < names.length; i++) {
    const k = names[i]!;
    let j = i - 1;
    for (; j >= 0 && compareCodePoints(names[j]!, k) > 0; j--) names[j + 1] = names[j]!;
    names[j + 1] = k;
  }
  return names;
}

const ALWAYS_SAFE = /^[A-Za-z0-9_.\-~]*$/;
/** Python's `quote_plus(s, safe='')`: UTF-8 percent-encoding, space as `+`, uppercase hex. */
export function quotePlus(s: string): string {
  if (ALWAYS_SAFE.test(s)) return s;
  return encodeURIComponent(s.toWellFormed())
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}
