import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pyFloatRepr } from '../src/core/json-text.js';
import { lookupCodec } from '../src/post/python-codecs.js';
import { parsePyJson, PyJsonError, type PyJson } from '../src/post/python-json.js';
import { requireTool } from './tool-check.js';

// parsePyJson and lookupCodec against CPython itself (/usr/bin/python3): the same texts read to
// the same values, or refused with the same message.

const PYTHON = '/usr/bin/python3';
const HAS_PYTHON = requireTool('python3', PYTHON, 'apt-get install python3');

/** Runs `script` with /usr/bin/python3, one JSON-encoded input a line, one JSON-encoded output a line. */
async function python(script: string, inputs: readonly unknown[]): Promise<unknown[]> {
  const run = promisify(execFile)(PYTHON, ['-c', script], { maxBuffer: 64 * 1024 * 1024 });
  run.child.stdin!.end(inputs.map((i) => JSON.stringify(i)).join('\n'));
  return (await run).stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

// json.loads as DRF calls it; the value written with ints, floats and objects made explicit.
const LOADS = `
import json, sys
def strict(c): raise ValueError('Out of range float values are not JSON compliant: ' + repr(c))
def canonical(v):
    if isinstance(v, bool) or v is None: return v
    if isinstance(v, int): return {'int': str(v)}
    if isinstance(v, float): return {'float': repr(v)}
    if isinstance(v, list): return [canonical(x) for x in v]
    if isinstance(v, dict): return {'object': sorted([k, canonical(x)] for k, x in v.items())}
    return v
for line in sys.stdin:
    try: print(json.dumps({'value': canonical(json.loads(json.loads(line), parse_constant=strict))}))
    except ValueError as e: print(json.dumps({'error': str(e)}))
`;

function canonical(v: PyJson): unknown {
  if (typeof v === 'bigint') return { int: String(v) };
  if (typeof v === 'number') return { float: Number.isFinite(v) ? pyFloatRepr(v) : v > 0 ? 'inf' : '-inf' };
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object')
    return {
      object: Object.keys(v)
        .sort(compareStrings)
        .map((k) => [k, canonical(v[k]!)]),
    };
  return v;
}
/** Python sorts str by code point. */
const compareStrings = (a: string, b: string) => {
  const [x, y] = [[...a].map((c) => c.codePointAt(0)!), [...b].map((c) => c.codePointAt(0)!)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

function ours(text: string): unknown {
  try {
    return { value: canonical(parsePyJson(text)) };
  } catch (error) {
    if (error instanceof PyJsonError) return { error: error.message };
    throw error;
  }
}

/** JSON texts, then broken: characters deleted, inserted (from those JSON cares about), the text cut. */
function hostileTexts(seed: number, count: number): string[] {
  const pieces = [
    '"',
    '\\',
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    '0',
    '1',
    '9',
    'e',
    'E',
    '.',
    '-',
    '+',
    'n',
    't',
    'f',
    'u',
    'N',
    'I',
    ' ',
    '\t',
    '\n',
    '\r',
    '\x01',
    'é',
    '😀',
    '\\u',
    'd83d',
    'x',
  ];
  const text = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v, null, 1)),
    fc
      .tuple(fc.jsonValue(), fc.array(fc.tuple(fc.nat(), fc.constantFrom(...pieces), fc.boolean()), { maxLength: 3 }))
      .map(([v, edits]) => {
        let s = JSON.stringify(v);
        for (const [at, piece, insert] of edits) {
          const i = s.length ? at % s.length : 0;
          s = insert ? s.slice(0, i) + piece + s.slice(i) : s.slice(0, i) + s.slice(i + 1);
        }
        return s;
      }),
    fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((p) => p.join('')),
  );
  return fc.sample(text, { seed, numRuns: count });
}

describe.skipIf(!HAS_PYTHON)(
  'parsePyJson reads what json.loads reads, and refuses what it refuses, with its message',
  () => {
    it('800 seeded texts: JSON values, broken JSON and runs of JSON characters', async () => {
      const texts = [
        ...hostileTexts(18, 800),
        '1e400',
        '-1e400',
        '1e-400',
        '-0',
        '-0.0',
        '[1e22, 5e-324, 0.1, 123456789012345678901234567890]',
      ];
      const expected = await python(LOADS, texts);
      const differences = texts
        .map((t, i) => ({ text: t, ours: ours(t), python: expected[i] }))
        .filter((d) => JSON.stringify(d.ours) !== JSON.stringify(d.python));
      expect(differences).toEqual([]);
    }, 60_000);
  },
);

describe.skipIf(!HAS_PYTHON)('lookupCodec finds what codecs.lookup finds, among UTF-8, Latin-1 and ASCII', () => {
  it('charset names, spelt as clients spell them', async () => {
    const names = [
      'utf-8',
      'UTF8',
      'utf 8',
      'u8',
      'utf',
      'UTF-8-SIG',
      'cp65001',
      'utf--8',
      '-utf8-',
      'utf.8',
      'u.t.f.8',
      'ütf8',
      'utf\u00e98',
      'latin1',
      'Latin-1',
      'latin',
      'l1',
      'L1',
      'ISO-8859-1',
      'iso8859_1',
      'ISO_8859-1:1987',
      'iso-ir-100',
      'csISOLatin1',
      'ibm819',
      'cp819',
      '8859',
      'iso8859',
      'ascii',
      'US-ASCII',
      'us',
      '646',
      'ANSI_X3.4-1968',
      'ansi_x3.4_1986',
      'iso_646.irv:1991',
      'iso646-us',
      'cp367',
      'windows-1252',
      'cp1252',
      'utf-16',
      'koi8-r',
      'foo',
      '',
      ' ',
      'utf-8;',
      'x-user-defined',
    ];
    const script = `
import codecs, json, sys
for line in sys.stdin:
    try: name = codecs.lookup(json.loads(line)).name
    except LookupError: name = None
    print(json.dumps({'utf-8': 'utf-8', 'iso8859-1': 'latin-1', 'ascii': 'ascii'}.get(name) if name else None))`;
    const found = await python(script, names);
    expect(Object.fromEntries(names.map((n) => [n, lookupCodec(n)]))).toEqual(
      Object.fromEntries(names.map((n, i) => [n, found[i]])),
    );
  });
});
