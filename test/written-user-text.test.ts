import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CitiesApiError } from '../src/core/errors.js';
import { endpointPath } from '../src/core/route-table.js';
import { escapeUriPath, mountOf } from '../src/core/url-path.js';
import {
  cloudFrontFunction,
  netlifyHeaders,
  netlifyRedirects,
  nginxConfig,
  openApiDocument,
  siteSpec,
} from '../src/app/library-entries.js';
import { settingsOf } from '../src/app/build-settings.js';
import { settingsModule } from '../src/app/edge-project.js';
import { cloudFrontStack } from '../src/hosts/cloudfront-stack.js';
import { siteRedirects } from '../src/hosts/netlify.js';
import { readTomlString } from '../src/hosts/toml-text.js';
import { yamlText } from '../src/hosts/yaml-text.js';
import { wranglerConfig } from '../src/platforms/cloudflare/recipe.js';
import { checkNetlifyToml, netlifyToml } from '../src/platforms/netlify/netlify-toml.js';
import type { SiteSpec } from '../src/site/spec.js';
import { normalizeBaseUrl } from '../src/site/spec.js';
import { tempDir, testSpec } from './helpers.js';

// User text written into generated code and configs. A library caller's base URL goes into every config the package writes (comments of nginx's
// config, the CloudFront Function's code and the stack, Netlify's _redirects, OpenAPI's servers):
// each writes it only as normalizeBaseUrl() gives it, as the CLI and the build pass it. The text
// given may hold what new URL() drops (line ends, tabs) or encodes (quotes, backticks, U+2028), which
// written as given open a new line of code, a new rule or a new directive.

const CONFIGS: Record<string, (spec: SiteSpec) => string> = {
  nginx: (spec) => nginxConfig(spec, { liveUrl: 'http://127.0.0.1:8080' }),
  'CloudFront Function': (spec) => cloudFrontFunction(spec),
  'CloudFront Function, live origin': (spec) => cloudFrontFunction({ ...spec, liveUrl: 'https://live.example.org' }),
  'CloudFront stack': (spec) => cloudFrontStack(spec),
  'CloudFront stack, live origin': (spec) => cloudFrontStack({ ...spec, liveUrl: 'https://live.example.org' }),
  "Netlify's _redirects": (spec) => netlifyRedirects(spec),
  "Netlify's _headers": (spec) => netlifyHeaders(spec),
  OpenAPI: (spec) => JSON.stringify(openApiDocument(spec)),
};

/** Base URLs a library caller may give (each passes the library's check): what each holds. */
const HOSTILE = [
  ['a line end', 'https://api.example.org/v1\nreturn 200;'],
  ['CRLF', 'https://api.example.org/v1\r\nreturn 200;'],
  ['a tab in the host', 'https://api.exa\tmple.org/v1'],
  ['quotes', `https://api.example.org/it's"q"`],
  ['an nginx or CloudFormation $', 'https://api.example.org/a$host${AWS::Region}'],
  ['the end of a block comment', 'https://api.example.org/a*/b'],
  ['backticks', 'https://api.example.org/a`b`'],
  ['U+2028 (a JavaScript line end)', 'https://api.example.org/a\u2028b'],
  ['an upper-case host and a trailing slash', 'https://API.Example.org/v1/'],
] as const;

/** What a config gives: its text, or its refusal's message (Netlify refuses a `*` in the base path). */
function outcome(write: () => string): string {
  try {
    return write();
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

/** The spec a caller builds with the package's own siteSpec() from settings holding `baseUrl`. */
const specOf = (baseUrl: string) => siteSpec({ ...testSpec(), baseUrl }, 48);

describe.each(Object.entries(CONFIGS))('%s', (_, config) => {
  it.each(HOSTILE)('a base URL with %s is written only as normalized', (_, baseUrl) => {
    expect(outcome(() => config(specOf(baseUrl)))).toBe(outcome(() => config(specOf(normalizeBaseUrl(baseUrl)))));
  });
});

describe("a site's _redirects for a base path Netlify misreads (no rule for the endpoint, the base URL said)", () => {
  it.each([
    ['a line end', 'https://api.example.org/:v1\n/* 200'],
    ['CRLF', 'https://api.example.org/:v1\r\n/* 200'],
  ])('a base URL with %s is written only as normalized', (_, baseUrl) => {
    expect(siteRedirects(specOf(baseUrl))).toBe(siteRedirects(specOf(normalizeBaseUrl(baseUrl))));
  });
});

describe("an edge project's cities-site.js, the site's directory named in its comment", () => {
  it.each([
    ['a line end', '../a\nprocess.exit(1)/'],
    ['CRLF', '../a\r\nprocess.exit(1)/'],
    ['U+2028 and U+2029', '../a\u2028process.exit(1)\u2029/'],
    ['quotes, backticks, $ and */', '../it\'s "a" `b` ${c} */ d/'],
  ])('a directory name with %s: three lines, the name in the code as given', (_, siteDir) => {
    const text = settingsModule({ settings: testSpec() }, siteDir);
    const lines = text.split(/\r\n|[\n\r\u2028\u2029]/);
    expect({
      lines: lines.length,
      siteDir: JSON.parse(lines[1]!.replace(/^export const siteDir = (.*);$/, '$1')),
    }).toEqual({
      lines: 4,
      siteDir,
    });
  });
});

// TOML 1.0's basic string (its ABNF): unescaped tab, space, ! and every character from # up but
// \ and DEL; or one of its escapes. Checked here, apart from the module that writes them.
const TOML_BASIC =
  /^"(?:[\t\x20\x21\x23-\x5b\x5d-\x7e\u0080-\u{10ffff}]|\\[btnfr"\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*"$/u;
const publishLine = (toml: string) =>
  toml
    .split('\n')
    .find((line) => line.startsWith('  publish = '))!
    .slice(12);

describe("netlify.toml's publish: the site's directory as a TOML basic string, read back as written", () => {
  it.each([
    ['a plain directory', 'dist'],
    ['DEL (U+007F), which TOML forbids raw and JSON.stringify leaves so', 'di\x7fst'],
    ['a line end and CR', 'di\nst\r'],
    ['NUL, ESC and U+001F', 'a\0b\x1bc\x1f'],
    ['a tab (TOML takes it raw)', 'a\tb'],
    ['quotes and backslashes', 'a"b\\c'],
    ['C1 controls, U+2028 and U+2029 (taken raw by TOML, escaped all the same)', 'a\u0085b\u2028c\u2029'],
    ['a character beyond the BMP', 'cit\u{1F3D9}s'],
  ])('%s', (_, dir) => {
    const written = publishLine(netlifyToml(dir));
    expect(written).toMatch(TOML_BASIC);
    expect(readTomlString(written.slice(1, -1))).toBe(dir);
  });
  it('a lone surrogate, which no TOML string holds: refused, naming the directory', () =>
    expect(() => netlifyToml('a\ud800b')).toThrow(/the site's directory a\ud800b holds a lone UTF-16 surrogate/));
});

describe("a netlify.toml's strings read as TOML reads them", () => {
  it.each<[string, string, string | undefined]>([
    ['\\U, which JSON has not', 'a\\U0001F3D9b', 'a\u{1F3D9}b'],
    ['\\e and \\x (TOML 1.1)', '\\e\\x41', '\x1bA'],
    ['a raw tab', 'a\tb', 'a\tb'],
    ["\\/, JSON's and not TOML's: not a string", 'a\\/b', undefined],
    ['a raw DEL: not a string', 'a\x7fb', undefined],
    ['\\u naming a surrogate: not a string', '\\uD800', undefined],
    ['\\U above U+10FFFF: not a string', '\\U00110000', undefined],
    ['a backslash ending it: not a string', 'a\\', undefined],
  ])('%s', (_, body, text) => expect(readTomlString(body)).toBe(text));
});

describe("edge netlify's check of the user's netlify.toml reads its publish as TOML does", () => {
  it.each<[string, string, RegExp | null]>([
    ['\\U escapes naming the site: accepted', 'publish = "\\U00000064ist"', null],
    [
      '\\e (TOML 1.1) naming another directory: refused, the site named',
      'publish = "d\\eist"',
      /publishes "d\x1bist", not the site/,
    ],
    [
      'an escape TOML has not: refused, naming the file and the key',
      'publish = "di\\qst"',
      /netlify\.toml sets publish to a string TOML does not read \("di\\qst": a raw control character or an unknown escape\)/,
    ],
  ])('%s', async (_, line, refusal) => {
    const { dir, cleanup } = await tempDir('cities-toml-');
    try {
      await writeFile(join(dir, 'netlify.toml'), `[build]\n  ${line}\n`);
      const checked = checkNetlifyToml(join(dir, 'netlify.toml'), dir, join(dir, 'dist'));
      await (refusal ? expect(checked).rejects.toThrow(refusal) : expect(checked).resolves.toBeUndefined());
      if (refusal) await expect(checked).rejects.toBeInstanceOf(CitiesApiError);
    } finally {
      await cleanup();
    }
  });
});

// The other configs written with user text in strings: wrangler.jsonc (JSON, which takes DEL and
// U+2028 raw) and the stack's YAML (yaml-text.ts: every control and non-ASCII character escaped).
const AWKWARD = ['di\x7fst', 'a\nb\r\tc', 'a\0b\x1bc\x1f', 'a"b\\c', 'a\u0085b\u2028c\u2029', 'cit\u{1F3D9}s'];

describe.each(AWKWARD.map((text) => [JSON.stringify(text), text]))('%s read back as written', (_, text) => {
  it("wrangler.jsonc's assets directory", () =>
    expect(JSON.parse(wranglerConfig(text, '/cities/').replace(/^\/\/.*\n/, '')).assets.directory).toBe(text));
  it('a YAML string (YAML 1.2 and 1.1)', () => {
    const yaml = yamlText({ key: text, list: [text] });
    expect(parseYaml(yaml)).toEqual({ key: text, list: [text] });
    expect(parseYaml(yaml, { version: '1.1' })).toEqual({ key: text, list: [text] });
  });
});

// Cloudflare's run_worker_first, matched as workers-shared matches it: the request URL's pathname,
// undecoded, against each rule, `*` any text and every other character itself.
const cloudflareMatches = (rules: string[], pathname: string) =>
  rules.some((rule) =>
    new RegExp(
      `^${rule
        .split('*')
        .map((part) => part.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&'))
        .join('.*')}$`,
    ).test(pathname),
  );
const workerFirst = (baseUrl: string) =>
  (
    JSON.parse(wranglerConfig('../site', escapeUriPath(endpointPath(mountOf(baseUrl)))).replace(/^\/\/.*\n/, '')) as {
      assets: { run_worker_first: string[] };
    }
  ).assets.run_worker_first;

describe("wrangler.jsonc's run_worker_first: a base path's own paths, as links and URL parsers spell them, and no other, or refused", () => {
  it.each<[string, string, string[] | RegExp]>([
    ['a plain base path', 'https://x/api/v1', ['/api/v1/cities/']],
    [
      '* (a wildcard, no escape): refused',
      'https://x/a*b',
      /endpoint's path \/a\*b\/cities\/ holds '\*', which Cloudflare's run_worker_first reads as any text.*--base-url/,
    ],
    ['*, written %2A: the same path, refused', 'https://x/a%2Ab', /holds '\*'/],
    ['? (written %3F)', 'https://x/a%3Fb', ['/a%3Fb/cities/']],
    ['[ and ], escaped in links, raw from a URL parser', 'https://x/a[b]', ['/a%5Bb%5D/cities/', '/a[b]/cities/']],
    ['{ and }', 'https://x/a{b}', ['/a%7Bb%7D/cities/']],
    ['^ and |, escaped in links, raw from a URL parser', 'https://x/a^b|c', ['/a%5Eb%7Cc/cities/', '/a^b|c/cities/']],
    [': at a segment start', 'https://x/:v1/api', ['/:v1/api/cities/']],
    ['! at a segment start', 'https://x/!v1', ['/!v1/cities/']],
    ['a space', 'https://x/a%20b', ['/a%20b/cities/']],
    ['an escaped non-ASCII character', 'https://x/caf%C3%A9', ['/caf%C3%A9/cities/']],
    ['an escaped %', 'https://x/50%25', ['/50%25/cities/']],
    ["dots and parentheses (a regular expression's syntax)", 'https://x/a.b(c)', ['/a.b(c)/cities/']],
    [
      'a base path whose rule is over 100 characters: refused',
      `https://x/${'a'.repeat(95)}`,
      /run_worker_first rule \/a{95}\/cities \(103 characters\), above the 100 wrangler takes/,
    ],
  ])('%s', (_, baseUrl, own) => {
    if (own instanceof RegExp) {
      expect(() => workerFirst(baseUrl)).toThrow(own);
      expect(() => workerFirst(baseUrl)).toThrow(CitiesApiError);
      return;
    }
    const rules = workerFirst(baseUrl);
    expect(rules.every((rule) => rule.length <= 100)).toBe(true);
    for (const endpoint of own)
      for (const path of [endpoint.slice(0, -1), endpoint, `${endpoint}x/y`, `${endpoint}7`])
        expect([path, cloudflareMatches(rules, path)]).toEqual([path, true]);
    const mount = own[0]!.slice(0, -'/cities/'.length);
    const others = [
      '/cities/',
      `${mount}x/cities/`,
      `${mount}/citiesx`,
      `${mount.replace(/[^/a-z0-9]/gi, 'x')}x/cities/`,
      `${mount}/x/cities/`,
    ];
    for (const path of others) expect([path, cloudflareMatches(rules, path)]).toEqual([path, false]);
  });
});

describe('build --for cloudflare refuses, before it builds, a base path edge cloudflare could route no Worker for', () => {
  it.each<[string, 'cloudflare' | undefined, string, RegExp | null]>([
    ['* in the base path, for Cloudflare: refused', 'cloudflare', 'https://x/a*b', /holds '\*'.*--base-url/],
    ['*, written %2A, for Cloudflare: refused', 'cloudflare', 'https://x/a%2Ab', /holds '\*'/],
    [
      'a rule over 100 characters, for Cloudflare: refused',
      'cloudflare',
      `https://x/${'a'.repeat(95)}`,
      /103 characters/,
    ],
    ['[ and ], for Cloudflare: built', 'cloudflare', 'https://x/a[b]', null],
    ['* for no host: built (nginx, S3 take it)', undefined, 'https://x/a*b', null],
  ])('%s', (_, host, baseUrl, refused) => {
    const settings = () => settingsOf({ data: 'cities.csv', baseUrl, ...(host ? { host } : {}) });
    if (!refused) return void expect(settings().baseUrl).toBe(normalizeBaseUrl(baseUrl));
    expect(settings).toThrow(refused);
    expect(settings).toThrow(CitiesApiError);
  });
});
