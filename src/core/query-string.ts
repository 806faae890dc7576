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
  // One pass over the characters (every request with a query is read here): a field's `=`, and
  // whether its name or value holds a `+` or `%` to decode, are noted on the way, not searched for.
  let start = 0;
  let eq = -1;
  let nameEncoded = false;
  let valueEncoded = false;
  for (let i = 0; i <= qs.length; i++) {
    const c = i < qs.length ? qs.charCodeAt(i) : AMPERSAND;
    if (c === AMPERSAND) {
      if (i > start)
        pairs.push(
          eq < 0
            ? [decoded(qs.slice(start, i), nameEncoded), '']
            : [decoded(qs.slice(start, eq), nameEncoded), decoded(qs.slice(eq + 1, i), valueEncoded)],
        );
      start = i + 1;
      eq = -1;
      nameEncoded = valueEncoded = false;
    } else if (c === EQUALS && eq < 0) eq = i;
    else if (c === PLUS || c === PERCENT) {
      if (eq < 0) nameEncoded = true;
      else valueEncoded = true;
    }
  }
  return pairs;
}

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PLUS = 0x2b;
const PERCENT = 0x25;

/** unquotePlus(text), where the caller knows whether it holds a `+` or `%` at all. */
function decoded(text: string, encoded: boolean): string {
  return encoded ? unquotePlus(text) : text;
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

/** Python's `quote_plus(s, safe='')`: UTF-8 percent-encoding, space as `+`, uppercase hex. */
export function quotePlus(s: string): string {
  if (alwaysSafe(s)) return s;
  return encodeURIComponent(s.toWellFormed())
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/** Whether every character is one quote() leaves as it is: `A-Za-z0-9_.-~` (a loop: most names and values are, and a regex costs more than they do). */
function alwaysSafe(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (
      !(
        (c >= 0x61 && c <= 0x7a) ||
        (c >= 0x41 && c <= 0x5a) ||
        (c >= 0x30 && c <= 0x39) ||
        c === 0x5f ||
        c === 0x2e ||
        c === 0x2d ||
        c === 0x7e
      )
    )
      return false;
  }
  return true;
}
