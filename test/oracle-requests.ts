import { NAME_FIELDS } from '../src/core/fields.js';
import type { Rng } from './oracle-rng.js';

// Seeded hostile requests for the DRF oracle: page, page_size, ordering and format values
// spelled every way Python might read differently (digits of other scripts, every kind of
// space, BOM, signs, underscores, huge numbers), repeated and misspelled parameters, broken
// percent-escapes, `+`, Accept headers, and the methods and paths around the listing.

export interface OracleRequest {
  readonly method: string;
  /** Path and query as sent on the request line (printable ASCII). */
  readonly target: string;
  readonly accept?: string;
}

/** Python's str.isspace() characters (int() strips only some of them: that is the point). */
const PY_SPACES = [
  '\t',
  '\n',
  '\v',
  '\f',
  '\r',
  '\x1c',
  '\x1d',
  '\x1e',
  '\x1f',
  ' ',
  '\x85',
  '\xa0',
  '\u1680',
  '\u2000',
  '\u2007',
  '\u200a',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
];
/** Characters that look like space or nothing but are not Python whitespace. */
const NOT_SPACES = ['\ufeff', '\u200b', '\u180e', '\u2060', '\x00', '\x1b', '\x7f', '\u200e'];
/** Zero of some decimal-digit (Nd) runs, BMP and astral. */
const ZEROS = [0x30, 0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0xff10, 0x1d7ce, 0x1d7d8, 0x1d7ec, 0x104a0, 0x1e950];
/** Number-like characters Python's int() does not take. */
const NOT_DIGITS = ['²', '½', 'Ⅻ', '〇', '٫', '１.０', '0x1', '0b1', '0o7', '1e1', '1.0', 'Infinity', 'NaN', '−1'];
const SIGNS = ['+', '-', '++', '+-', '−', '＋'];
const UNKNOWN_FIELDS = [
  'id',
  'top',
  'pk',
  'name',
  'NAME_EN',
  'name_EN',
  'name_en_',
  'name_xx',
  'created_at',
  'longitude',
  'name_en__len',
  'ｎame_en',
  '',
];
const FORMATS = [
  'json',
  'json',
  'api',
  'api',
  '',
  'JSON',
  'Api',
  'xml',
  'html',
  'yaml',
  'jsonp',
  'json ',
  ' api',
  '\ufeffjson',
  'api\x00',
  'json%',
  'js',
];
const PARAM_TYPOS = [
  'Page',
  'PAGE',
  'page ',
  ' page',
  '\ufeffpage',
  'page\ufeff',
  'page\x00',
  'page_size\x1f',
  'pagesize',
  'page-size',
  'PAGE_SIZE',
  'ordering\u200b',
  'Ordering',
  'format ',
  'page[]',
  'foo',
  'a b',
  'é',
  '',
  '_',
];
const RAW_FIELDS = [
  '',
  '&',
  '=',
  '==x',
  'page',
  'page_size',
  'ordering',
  'format',
  'page=2=3',
  '%',
  '%zz',
  '%2',
  'page=%',
  'page=%ZZ1',
  'page%3D2',
  'page=1%262',
  '%EF%BB%BFpage=2',
  'page=%EF%BB%BF2',
  'ordering=%EF%BB%BFname_en',
  'page_size=%EF%BB%BF3',
  'page=%ED%A0%80',
  'page=%C0%B2',
  'page=%F0%9D%9F%9A',
  'page=%FF',
  'page_size=%E2%80',
  'page_size=2%E2%80',
  ';page=2',
  'page=2;page_size=3',
  'page=+2',
  'page=%2B2',
  'page=2+',
  'page_size=+3+',
  'page=%c3%a9',
  'ordering=name_en%2C-name_ar',
  'ordering=+name_en',
  'pa%67e=2',
  'page=%32',
  'format=js%6Fn',
  'format=%FF',
];
const MEDIA = [
  '*/*',
  'application/json',
  'text/html',
  'text/*',
  'application/*',
  'image/png',
  'application/xml',
  '*/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'Text/HTML',
  'application/json; q=0',
  'text/html; q=0.1',
  'application/json; indent=4',
  'application/json;indent=2',
  'application/json; indent= 3 ',
  'application/json; indent="4"',
  'application/json; indent=-1',
  'application/json; indent=100',
  'application/json; indent=0',
  'application/json; indent=1_0',
  'application/json; indent=\xa04',
  'application/json; indent=\x1f4',
  'application/json; indent=4; indent=2',
  '*/*; indent=2',
  'application/*; indent=5',
  'application/json; indent',
  'application/json; =4',
  'application/json;;indent=2',
  'application/json; x="a;b"; indent=2',
  'text/html; indent=4',
  'application/json; charset=é',
  'text/plain',
  '',
  ';',
  'application',
  'application/',
  '/json',
  'application/json ; indent = 6',
];

export function oracleRequest(rng: Rng, count: number, mount: string): OracleRequest {
  const method = rng.chance(0.75)
    ? 'GET'
    : rng.pick(['HEAD', 'HEAD', 'OPTIONS', 'OPTIONS', 'PUT', 'PATCH', 'DELETE', 'TRACE']);
  const fields = Array.from({ length: rng.pick([0, 1, 1, 2, 2, 2, 3, 3, 4, 5]) }, () => field(rng, count));
  const query = fields.length
    ? `?${fields.join('&')}`
    : rng.chance(0.05)
      ? '?'
      : rng.chance(0.02)
        ? `?${'x&'.repeat(rng.int(998, 1001))}`
        : '';
  const target = `${mount}${path(rng)}${query}`;
  return rng.chance(0.35) ? { method, target, accept: accept(rng) } : { method, target };
}

function path(rng: Rng): string {
  if (rng.chance(0.9)) return '/cities/';
  return rng.pick([
    '/cities',
    '/cities',
    '/cities/1',
    '/cities//',
    '//cities/',
    '/Cities/',
    '/cities/index.json',
    '/cities%2F',
    '/ci%74ies/',
    '/cities/%2e',
    '/cities/%FF',
    '/cities/x',
  ]);
}

/** Header whitespace of all kinds (Latin-1: what a header can carry), Python and ASCII alike. */
const HEADER_SPACES = [' ', '\t', '\v', '\f', '\x1c', '\x1f', '\x85', '\xa0'];
/** Media ranges with non-ASCII bytes in the type or a parameter name (DRF 3.14 on Django 3.2 fails on them). */
const NON_ASCII_MEDIA = [
  'application/jsoné',
  'application/json; é=1',
  'text/html;\xa0q=1',
  '\xa0application/json\xa0',
  'application/json;\xa0indent=4',
];

function accept(rng: Rng): string {
  const token = () => {
    const media = rng.chance(0.03) ? rng.pick(NON_ASCII_MEDIA) : rng.pick(MEDIA);
    const pad = () => (rng.chance(0.1) ? rng.pick(HEADER_SPACES) : '');
    return `${pad()}${rng.chance(0.1) ? media.replace(';', `${pad()};${pad()}`) : media}${pad()}`;
  };
  return Array.from({ length: rng.int(1, 3) }, token).join(rng.pick([',', ', ', ' ,']));
}

/** One `name=value` field of the query, as sent. */
function field(rng: Rng, count: number): string {
  const kind = rng.pick([
    'page',
    'page',
    'page',
    'page_size',
    'page_size',
    'ordering',
    'ordering',
    'ordering',
    'format',
    'typo',
    'raw',
  ]);
  if (kind === 'raw') return rng.pick(RAW_FIELDS);
  if (kind === 'typo')
    return `${encode(rng, rng.pick(PARAM_TYPOS))}=${encode(rng, rng.pick(['2', '1', 'name_en', 'json', '', '{|}', '"<a>"', '^`\\', 'é 𝒜']))}`;
  const value =
    kind === 'page'
      ? pageValue(rng, count)
      : kind === 'page_size'
        ? sizeValue(rng, count)
        : kind === 'ordering'
          ? orderingValue(rng)
          : rng.pick(FORMATS);
  return `${encode(rng, kind)}=${encode(rng, value)}`;
}

function pageValue(rng: Rng, count: number): string {
  const r = rng.next();
  if (r < 0.55) return spellNumber(rng, BigInt(rng.int(-1, Math.ceil(count / 10) + 2)));
  if (r < 0.7)
    return rng.pick(['last', 'last', 'LAST', 'Last', ' last', 'last ', '\ufefflast', 'last\x00', 'lastt', 'last\x1f']);
  if (r < 0.85) return rng.pick(NOT_DIGITS);
  return hugeNumber(rng, count);
}

function sizeValue(rng: Rng, count: number): string {
  const r = rng.next();
  if (r < 0.6) return spellNumber(rng, BigInt(rng.pick([rng.int(-2, count + 2), 10, count, count + 1, 1, 0])));
  if (r < 0.7) return rng.pick(NOT_DIGITS);
  return hugeNumber(rng, count);
}

/** Numbers beyond every boundary: 2^53, 2^63, 2^1024 (float overflow), count * 2^1075 (float underflow), 4300 digits. */
function hugeNumber(rng: Rng, count: number): string {
  const hits = BigInt(Math.max(1, count));
  const n = rng.pick([
    2n ** 53n + 1n,
    2n ** 63n,
    10n ** 20n,
    2n ** 1024n,
    10n ** 309n,
    hits * 2n ** 1075n,
    hits * 2n ** 1075n - 1n,
    hits * 2n ** 1075n + 1n,
    (hits - 1n) * 2n ** 1075n + 1n,
    2n ** 1075n,
    10n ** 330n,
    10n ** 4299n,
    10n ** 4300n,
  ]);
  return rng.chance(0.7) ? String(n) : spellNumber(rng, n);
}

/** A number as a client might spell it: other scripts' digits, zeros in front, underscores, sign, spaces around. */
function spellNumber(rng: Rng, n: bigint): string {
  let digits = String(n < 0n ? -n : n);
  if (rng.chance(0.1)) digits = '0'.repeat(rng.int(1, 3)) + digits;
  if (rng.chance(0.1) && digits.length > 1)
    digits = digits.replace(/(\d)(?=\d)/, rng.pick(['$1_', '$1__', '$1_', '_$1']));
  if (rng.chance(0.2)) {
    const zero = rng.pick(ZEROS);
    digits = digits.replace(/\d/g, (d) => (rng.chance(0.8) ? String.fromCodePoint(zero + Number(d)) : d));
  }
  let sign = n < 0n ? '-' : '';
  if (rng.chance(0.08)) sign = rng.pick(SIGNS);
  return `${pad(rng)}${sign}${digits}${pad(rng)}`;
}

/** Usually nothing; else a run of Python whitespace or of lookalikes. */
function pad(rng: Rng): string {
  if (rng.chance(0.8)) return '';
  const pool = rng.chance(0.7) ? PY_SPACES : NOT_SPACES;
  return Array.from({ length: rng.int(1, 2) }, () => rng.pick(pool)).join('');
}

function orderingValue(rng: Rng): string {
  const term = () => {
    const field = rng.chance(0.8) ? rng.pick(NAME_FIELDS) : rng.pick(UNKNOWN_FIELDS);
    const sign = rng.chance(0.6) ? '' : rng.chance(0.8) ? '-' : rng.pick(['--', '+', '−', '-\u0020']);
    return `${pad(rng)}${sign}${field}${pad(rng)}`;
  };
  const terms = Array.from({ length: rng.pick([1, 1, 1, 2, 2, 3]) }, term);
  const joined = terms.join(rng.chance(0.9) ? ',' : rng.pick([', ', ',,', '，', ';']));
  return rng.chance(0.05) ? rng.pick(['', ',', `${joined},`, `,${joined}`]) : joined;
}

const UNRESERVED = /[A-Za-z0-9_.\-~]/;
/** Printable ASCII a request line may carry raw in a query besides the unreserved (not `#&+=%`). */
const RAW_OK = /[!$'()*,;:@/?{}|^`"<>[\]\\]/;

/** Percent-encodes text for a query, in one of the spellings clients use (`+` or `%20`, lower-case hex, needless escapes). */
function encode(rng: Rng, text: string): string {
  const plus = rng.chance(0.5);
  const lower = rng.chance(0.2);
  let out = '';
  for (const ch of text) {
    if (UNRESERVED.test(ch) && !rng.chance(0.03)) out += ch;
    else if (ch === ' ' && plus) out += '+';
    else if (RAW_OK.test(ch) && rng.chance(0.6)) out += ch;
    else {
      const hex = [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');
      out += lower ? hex.toLowerCase() : hex;
    }
  }
  return out;
}
