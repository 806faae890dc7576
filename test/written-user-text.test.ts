import { describe, expect, it } from 'vitest';
import {
  cloudFrontFunction,
  netlifyHeaders,
  netlifyRedirects,
  nginxConfig,
  openApiDocument,
  siteSpec,
} from '../src/app/library-entries.js';
import { settingsModule } from '../src/app/edge-project.js';
import { cloudFrontStack } from '../src/hosts/cloudfront-stack.js';
import { siteRedirects } from '../src/hosts/netlify.js';
import type { SiteSpec } from '../src/site/spec.js';
import { normalizeBaseUrl } from '../src/site/spec.js';
import { testSpec } from './helpers.js';

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
