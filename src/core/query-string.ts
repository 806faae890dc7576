import { compareCodePoints } from './codepoint.js';

/** One `name=value` pair of a query string, percent-decoded. */
export type QueryPair = readonly [name: string, value: string];

/** As Python's decode: a leading U+FEFF is kept (TextDecoder drops it by default). */
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * Python's `urllib.parse.parse_qsl(qs, keep_blank_values=True)`, as Django reads `request.GET`:
 * split on `&`, skip empty fields, a name without `=` gets an empty value, `+` is a space,
 * percent-escapes are UTF-8 with invalid bytes replaced by U+FFFD. The query is `qs`, or its
 * characters [from, to).
 */
export function parseQuery(qs: string, from = 0, to = qs.length): readonly QueryPair[] {
  const pairs: QueryPair[] = [];
  // One pass over the characters (every request with a query is read here): a field's `=`, and
  // whether its name or value holds a `+` or `%` to decode, are noted on the way, not searched for.
  // Read in place in a request's target: a sliced string's characters cost V8 more (1,000 instructions a query).
  let start = from;
  let eq = -1;
  let nameEncoded = false;
  let valueEncoded = false;
  let plain = true;
  for (let i = from; i <= to; i++) {
    const c = i < to ? qs.charCodeAt(i) : AMPERSAND;
    // Plain: every name and value of ALWAYS_SAFE characters (a second `=` is a value's, which quote() encodes).
    if (plain && !(c < 0x80 && ALWAYS_SAFE[c]) && c !== AMPERSAND && !(c === EQUALS && eq < 0)) plain = false;
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
  lastPlain = plain ? pairs : undefined;
  return pairs;
}

/** The characters quote() leaves as they are (`A-Za-z0-9_.-~`), by code: 1 where so. */
const ALWAYS_SAFE = new Uint8Array(0x80);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~') ALWAYS_SAFE[c.charCodeAt(0)] = 1;
/** The pairs parseQuery() made last, when each of their names and values is of ALWAYS_SAFE characters only. */
let lastPlain: readonly QueryPair[] | undefined;

/**
 * Whether every name and value of `pairs` is made of ALWAYS_SAFE characters, known without
 * reading them again for the pairs of the last query parsed (most requests ask it of those, at
 * once): for others, false. Compared by identity, so it never speaks of other pairs.
 */
export function plainPairs(pairs: readonly QueryPair[]): boolean {
  return pairs === lastPlain;
}

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PLUS = 0x2b;
const PERCENT = 0x25;

/** unquotePlus(text), where the caller knows whether it holds a `+` or `%` at all. */
function decoded(text: string, encoded: boolean): string {
  return encoded ? unquotePlus(text) : text;
}

/**
 * Whether a query holds more than `limit` fields as Django counts them (queryFieldCount): a query
 * shorter than the limit cannot (each field but the last takes a `&`), so it is not scanned.
 */
export function moreFieldsThan(qs: string, limit: number): boolean {
  return qs.length >= limit && queryFieldCount(qs) > limit;
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
  const { before: head, after: tail } = paramPlace(pairs, name);
  const key = `${quotePlus(name)}=`;
  const without = head && tail ? `${head}&${tail}` : head || tail;
  return (value) => {
    if (value === null) return without;
    const set = key + quotePlus(value);
    return (head ? `${head}&` : '') + set + (tail ? `&${tail}` : '');
  };
}

/**
 * The query withParam() writes for `pairs` with `name` set, cut where `name`'s field goes: the
 * fields sorted before it and those after it, encoded and joined by `&` (each '' when none).
 */
export function paramPlace(pairs: readonly QueryPair[], name: string): { before: string; after: string } {
  let before = ''; // grown in place, no arrays joined
  let after = '';
  const plain = plainPairs(pairs);
  // Plain names are ASCII: for them, code unit order (`<`) is code point order.
  for (const [k, v] of otherPairs(pairs, name, plain)) {
    const field = plain ? `${k}=${v}` : `${quotePlus(k)}=${quotePlus(v)}`;
    if (plain ? k < name : compareCodePoints(k, name) < 0) before = before ? `${before}&${field}` : field;
    else after = after ? `${after}&${field}` : field;
  }
  return { before, after };
}

/** Most pairs are sorted by an insertion sort in place (as most queries have); more by Array's sort. */
const FEW_PAIRS = 8;

/**
 * The pairs not named `name`, stably sorted by name in code point order: as DRF groups them (a
 * name's values together, in order, at its first place) and then sorts the groups by name, for
 * a stable sort keeps equal names in their order.
 */
function otherPairs(pairs: readonly QueryPair[], name: string, plain: boolean): QueryPair[] {
  const others: QueryPair[] = [];
  for (const pair of pairs) if (pair[0] !== name) others.push(pair);
  if (others.length > FEW_PAIRS) return others.sort((a, b) => compareCodePoints(a[0], b[0]));
  for (let i = 1; i < others.length; i++) {
    const pair = others[i]!;
    let j = i - 1;
    for (; j >= 0 && (plain ? others[j]![0] > pair[0] : compareCodePoints(others[j]![0], pair[0]) > 0); j--)
      others[j + 1] = others[j]!;
    others[j + 1] = pair;
  }
  return others;
}

/** Python's `quote_plus(s, safe='')`: UTF-8 percent-encoding, space as `+`, uppercase hex. */
export function quotePlus(s: string): string {
  if (alwaysSafe(s)) return s;
  return encodeURIComponent(s.toWellFormed())
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/** Whether every character is one quote() leaves as it is. */
function alwaysSafe(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(c < 0x80 && ALWAYS_SAFE[c])) return false;
  }
  return true;
}
