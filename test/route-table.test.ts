import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../src/core/route-table.js';

// The route table is the one place that spells the API's parameters, paths and headers: any
// other module that writes one of them as a literal restates it, and could drift.

const SRC = resolve(import.meta.dirname, '../src');
const TABLE = 'core/route-table.ts';

/** A module's code without its comments (whole-line ones: `//`, and the lines of `/* *\/` blocks). */
const codeOf = (text: string) =>
  text
    .split('\n')
    .filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line))
    .join('\n');
const modules = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && f !== TABLE)
  .map((f) => [f, codeOf(readFileSync(join(SRC, f), 'utf8'))] as const);

const quoted = (value: string) => new RegExp(`['"\`]${value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"\`]`, 'i');
const spellings: [string, RegExp][] = [
  ...Object.values(ROUTES.param).map((p): [string, RegExp] => [`the parameter ${p}`, quoted(p)]),
  // `json` and `html` also name the renderers inside the code: a format is its value after `format`.
  ...Object.values(ROUTES.format).map((f): [string, RegExp] => [
    `the format ${f}`,
    new RegExp(`format\\W+['"\`]${f}['"\`]|format=${f}\\b`),
  ]),
  [`the last page's ${ROUTES.lastPage}`, quoted(ROUTES.lastPage)],
  [`the absent parameter's ${ROUTES.absent}`, quoted(ROUTES.absent)],
  // An IAM policy statement's `Effect: 'Allow'` (the CloudFormation stack) is not the Allow header.
  ...[...Object.keys(ROUTES.headers), ...Object.values(ROUTES.header)].map((h): [string, RegExp] => [
    `the header ${h}`,
    new RegExp(`(?<!Effect: )${quoted(h).source}`, 'i'),
  ]),
  ...[...Object.values(ROUTES.contentType), ...Object.values(ROUTES.mediaType)].map((t): [string, RegExp] => [
    `the content type ${t}`,
    quoted(t),
  ]),
  [`the site's folder ${ROUTES.file.dir}/`, new RegExp(`['"\`/]${ROUTES.file.dir}/`)],
  [`the site's own folder ${ROUTES.file.meta}`, new RegExp(ROUTES.file.meta)],
  ...Object.values(ROUTES.extras).map((path): [string, RegExp] => [`the file ${path}`, quoted(path)]),
];

describe('the route table is the only place that spells the API', () => {
  it.each(spellings)('%s is written nowhere else in src/', (_, pattern) => {
    expect(
      modules
        .filter(([, code]) => pattern.test(code))
        .map(
          ([file, code]) =>
            `${file}: ${code
              .split('\n')
              .find((line) => pattern.test(line))!
              .trim()}`,
        ),
    ).toEqual([]);
  });

  it('the check finds a restated spelling', () => {
    expect(
      spellings.filter(([, pattern]) =>
        pattern.test("const x = { 'page_size': 1, Vary: 'Accept' }; '/cities/'; 'Vary'"),
      ).length,
    ).toBeGreaterThanOrEqual(2);
  });
});
