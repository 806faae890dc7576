import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { CitiesApiError, type Problem } from '../src/core/errors.js';
import { ROUTES } from '../src/core/route-table.js';
import { cloudFrontFunction } from '../src/hosts/cloudfront.js';
import { cloudFrontStack } from '../src/hosts/cloudfront-stack.js';
import { checkLiveUrl } from '../src/hosts/live-url.js';
import { netlifyRedirects } from '../src/hosts/netlify.js';
import { nginxConfig } from '../src/hosts/nginx.js';
import { KIT, tempDir, testSpec } from './helpers.js';

// A live URL goes into nginx's proxy_pass, Netlify's _redirects, the CloudFront Function's code and
// the CloudFormation stack (YAML): every config it enters refuses one holding a character that config
// reads as syntax, and writes it only as checkLiveUrl normalized it (the text given may hold a line
// end or a tab, which new URL() drops: a check of the text, then the text written, wrote them).

const CONFIGS = {
  nginx: (url: string) => nginxConfig(testSpec(), { liveUrl: url }),
  cloudfront: (url: string) => cloudFrontFunction(testSpec({ liveUrl: url })),
  'cloudfront stack': (url: string) => cloudFrontStack(testSpec({ liveUrl: url })),
  netlify: (url: string) => netlifyRedirects(testSpec({ liveUrl: url })),
} as const;

const UNSAFE = [
  ['an nginx variable', 'https://live.example.org/a$host', '$', '%24'],
  ['the end of an nginx directive', 'http://live.example.org:8080/x;return', ';', '%3B'],
  ['a Netlify placeholder', 'https://live.example.org/:splat', ':', '%3A'],
  ['a Netlify splat', 'https://live.example.org/a*', '*', '%2A'],
  ['a quote', "https://live.example.org/it's", "'", '%27'],
  ['a CloudFormation substitution', 'https://live.example.org/${AWS::Region}', '$', '%24'],
  ['an nginx block', 'https://live.example.org/a|b', '|', '%7C'],
] as const;

/** Texts that new URL() reads as a safe URL once normalized: each config holds that URL, never the text. */
const NORMALIZED = [
  ['a line end in its path', 'https://live.example.org/a\nreturn 200', 'https://live.example.org/areturn%20200'],
  ['CRLF in its path', 'https://live.example.org/a\r\n/b', 'https://live.example.org/a/b'],
  ['a tab in its host', 'https://live.exa\tmple.org/x', 'https://live.example.org/x'],
  ['a space in its path', 'https://live.example.org/a b', 'https://live.example.org/a%20b'],
  [
    'double quotes and braces in its path',
    'https://live.example.org/"a"{b}',
    'https://live.example.org/%22a%22%7Bb%7D',
  ],
  ['a backslash', 'https://live.example.org\\base', 'https://live.example.org/base'],
  ['an upper-case host and a trailing slash', 'https://LIVE.Example.org/base/', 'https://live.example.org/base'],
] as const;

describe.each(Object.entries(CONFIGS))('%s config', (name, config) => {
  it.each(UNSAFE)('refuses %s in the live URL', (_, url, char, encoded) => {
    expect(() => config(url)).toThrow(CitiesApiError);
    expect(() => config(url)).toThrow(`holds "${char}"`);
    expect(() => config(url)).toThrow(encoded);
  });

  it.each(NORMALIZED)('writes a live URL with %s as normalized, never as given', (_, url, normalized) => {
    const text = config(url);
    expect(text).toContain(normalized);
    expect(text).not.toContain(url);
  });

  const cloudFront = name.startsWith('cloudfront');
  it.each([
    ['a percent-encoded dollar', 'https://live.example.org/a%24host', 'https://live.example.org/a%24host'],
    ['a port and a path', 'http://live.example.org:8080/base/', 'http://live.example.org:8080/base'],
    ...(cloudFront
      ? []
      : [['an IP address, a port and a path', 'http://10.0.0.5:8080/base/', 'http://10.0.0.5:8080/base']]),
  ])('keeps %s as given', (_, url, kept) => {
    expect(config(url)).toContain(kept);
  });

  // CloudFront's origins are domain names: only the stack refused an IP address, the function wrote it as its origin.
  it.each([
    ['an IPv4 address', 'http://10.0.0.5:8080', '10.0.0.5'],
    ['an IPv6 address', 'http://[fd00::5]:8080/base', '[fd00::5]'],
  ])(`${cloudFront ? 'refuses' : 'takes'} %s`, (_, url, host) => {
    if (cloudFront) expect(() => config(url)).toThrow(`has no DNS name (${host}): CloudFront's origins need one`);
    else expect(config(url)).toContain(host);
  });
});

describe('checkLiveUrl', () => {
  it.each([
    ['a host that is no DNS name', 'https://a$b.example.org', 'host'],
    ['a query', 'https://live.example.org/?x=1', 'query'],
    ['credentials', 'https://u:p@live.example.org', 'credentials'],
    ['another scheme', 'ftp://live.example.org', 'http and https'],
    ['no scheme', 'live.example.org', 'expected'],
  ])('refuses %s', (_, url, why) => {
    expect(() => checkLiveUrl(url)).toThrow(why);
  });

  it('build refuses it before writing anything (exit 2)', async () => {
    const out = `${await tempDir()}/site`;
    const error = await build({ data: KIT, out, liveUrl: 'https://live.example.org/$uri' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect((error as CitiesApiError).exitCode).toBe(2);
  });
});

// A build wrote the CloudFront Function with an IP address as its origin, which CloudFront refuses when it is
// published: a site whose live URL is one leaves the function out, and says why (nginx and Netlify take it).
describe("a site's CloudFront Function and its live URL", () => {
  const FUNCTION = ROUTES.extras.cloudfront;
  const SAMPLE = join(import.meta.dirname, '../data/cities.csv');
  it.each([
    ['a DNS name: the function written, nothing said', 'https://live.example.org', true, []],
    [
      'an IP address: the function left out, and why said',
      'http://10.0.0.5:8080',
      false,
      [
        `the site leaves out its CloudFront Function (${FUNCTION}): the live URL http://10.0.0.5:8080 has no DNS name (10.0.0.5): CloudFront's origins need one (a Lambda function URL, or a name with a certificate CloudFront trusts); give one with \`liveUrl\``,
      ],
    ],
  ])('%s', async (_, liveUrl, written, said) => {
    const out = join((await tempDir()).dir, 'site');
    const warnings: Problem[] = [];
    await build({
      data: SAMPLE,
      out,
      liveUrl,
      orderings: ['default'],
      compression: 'none',
      onWarning: (problem) => void warnings.push(problem),
    });
    expect(warnings.map((w) => w.reason).filter((reason) => reason.includes('CloudFront'))).toEqual(said);
    expect((await readdir(join(out, '_cities-api'))).includes(FUNCTION.split('/').at(-1)!)).toBe(written);
  });
});
