import { describe, expect, it } from 'vitest';
import { indentJson } from '../src/core/json-text.js';
import { negotiate } from '../src/core/negotiate.js';

describe('negotiate picks the renderer as DRF content negotiation does', () => {
  it.each([
    ['no Accept header', undefined, undefined, { renderer: 'json', indent: null }],
    ['*/*', undefined, '*/*', { renderer: 'json', indent: null }],
    ['application/json', undefined, 'application/json', { renderer: 'json', indent: null }],
    [
      'a browser',
      undefined,
      'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
      { renderer: 'html', indent: null },
    ],
    ['text/html', undefined, 'text/html', { renderer: 'html', indent: null }],
    ['JSON wins a tie by renderer order', undefined, 'text/html, application/json', { renderer: 'json', indent: null }],
    ['q-values are ignored', undefined, 'application/json;q=0.1, text/html;q=1', { renderer: 'json', indent: null }],
    ['text/* picks the browsable page', undefined, 'text/*', { renderer: 'html', indent: null }],
    ['format=json beats a browser', 'json', 'text/html,*/*;q=0.8', { renderer: 'json', indent: null }],
    ['format=api without Accept', 'api', undefined, { renderer: 'html', indent: null }],
    ['empty format is no format', '', 'text/html', { renderer: 'html', indent: null }],
    ['indent parameter', undefined, 'application/json; indent=4', { renderer: 'json', indent: 4 }],
    ['indent on */*', undefined, '*/*; indent=2', { renderer: 'json', indent: 2 }],
    ['indent clamped to 8', undefined, 'application/json; indent=20', { renderer: 'json', indent: 8 }],
    ['indent 0 means none', undefined, 'application/json; indent=0', { renderer: 'json', indent: null }],
    ['indent not a number', undefined, 'application/json; indent=x', { renderer: 'json', indent: null }],
    ['quoted parameter', undefined, 'application/json; indent="3"', { renderer: 'json', indent: 3 }],
    ['type is case-insensitive', undefined, 'Application/JSON', { renderer: 'json', indent: null }],
  ])('%s', (_, format, accept, expected) => {
    expect(negotiate(format, accept)).toEqual(expected);
  });

  it.each([
    ['unknown format', 'xml', undefined, { status: 404, detail: 'Not found.' }],
    [
      'format=json with an Accept it cannot meet',
      'json',
      'text/html',
      { status: 406, detail: 'Could not satisfy the request Accept header.' },
    ],
    [
      'unsupported type',
      undefined,
      'application/xml',
      { status: 406, detail: 'Could not satisfy the request Accept header.' },
    ],
    ['empty Accept header', undefined, '', { status: 406, detail: 'Could not satisfy the request Accept header.' }],
  ])('%s → %j', (_, format, accept, expected) => {
    expect(negotiate(format, accept)).toEqual(expected);
  });
});

// Found by the DRF oracle; each expected answer is what DRF 3.14 on Django 3.2 (/usr/bin/python3) gives.
describe('Accept headers are read as DRF + Django 3.2 parse them', () => {
  const json = (indent: number | null) => ({ renderer: 'json', indent });
  it.each([
    ['tokens are str.strip()ed: U+001C-U+001F around a token', '\x1capplication/json; indent=3\x1f', json(3)],
    ['tokens are str.strip()ed: NEL before a token', '\x85text/html', { renderer: 'html', indent: null }],
    [
      'inside a token only ASCII whitespace is stripped (U+001C stays in the type)',
      'application/json\x1c; indent=2',
      { status: 406, detail: 'Could not satisfy the request Accept header.' },
    ],
    ['a vertical tab is ASCII whitespace', 'application/json\v; indent=2', json(2)],
    ['a wildcard passes its parameters re-joined and parsed again', '*/*; indent="4;indent=2"', json(2)],
    ['a quoted value is one value', 'application/json; indent="4;indent=2"', json(null)],
    ['a quoted semicolon does not split', 'application/json; x="a;b"; indent=2', json(2)],
    ['an escaped quote still counts as a quote when splitting', 'application/json; x="a\\";b"; indent=2', json(null)],
    ["RFC 2231 name*=charset''value is decoded", "application/json; indent*=utf-8''%35", json(5)],
    ['a name* without charset keeps its value', 'application/json; indent*=5', json(5)],
    ['parameter names are case-insensitive', 'application/json; INDENT=6', json(6)],
    ['the last of a repeated parameter wins', 'application/json; indent=1; indent=7', json(7)],
    ['a no-break space before the value is skipped by int()', 'application/json; indent=\xa04', json(4)],
    [
      'the most specific type wins before renderer order',
      'text/html; q=1; indent=3, application/json; indent=2',
      json(2),
    ],
  ])('%s', (_, accept, expected) => {
    expect(negotiate(undefined, accept)).toEqual(expected);
  });
});

describe('indentJson lays out JSON as json.dumps(indent=n) does, changing only whitespace', () => {
  it.each([
    [
      'nested',
      '{"a":[1,{"b":null}],"c":"x"}',
      2,
      '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ],\n  "c": "x"\n}',
    ],
    ['empty containers', '{"a":[],"b":{}}', 4, '{\n    "a": [],\n    "b": {}\n}'],
    ['punctuation inside strings untouched', '{"s":"a,b:{c}[\\"d\\"]"}', 1, '{\n "s": "a,b:{c}[\\"d\\"]"\n}'],
    ['numbers keep their spelling', '[66.0,1e-06]', 1, '[\n 66.0,\n 1e-06\n]'],
  ])('%s', (_, compact, indent, expected) => {
    expect(indentJson(compact, indent)).toBe(expected);
  });
});
