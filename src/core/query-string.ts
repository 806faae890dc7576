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
  if (!qs) return pairs;
  for (const field of qs.split('&')) {
    if (!field) continue;
    const eq = field.indexOf('=');
    const name = eq < 0 ? field : field.slice(0, eq);
    const value = eq < 0 ? '' : field.slice(eq + 1);
    pairs.push([unquotePlus(name), unquotePlus(value)]);
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
  const before: string[] = [];
  const after: string[] = [];
  for (const k of [...groups.keys()].sort(compareCodePoints)) {
    const side = compareCodePoints(k, name) < 0 ? before : after;
    for (const v of groups.get(k)!) side.push(`${quotePlus(k)}=${quotePlus(v)}`);
  }
  const [head, tail, key] = [before.join('&'), after.join('&'), `${quotePlus(name)}=`];
  const without = head && tail ? `${head}&${tail}` : head || tail;
  return (value) => {
    if (value === null) return without;
    const set = key + quotePlus(value);
    return (head ? `${head}&` : '') + set + (tail ? `&${tail}` : '');
  };
}

const ALWAYS_SAFE = /^[A-Za-z0-9_.\-~]*$/;
/** Python's `quote_plus(s, safe='')`: UTF-8 percent-encoding, space as `+`, uppercase hex. */
export function quotePlus(s: string): string {
  if (ALWAYS_SAFE.test(s)) return s;
  return encodeURIComponent(s.toWellFormed())
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}
