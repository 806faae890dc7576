import { describe, expect, it } from 'vitest';
import { build } from '../src/app/build.js';
import { CitiesApiError } from '../src/core/errors.js';
import { cloudFrontFunction } from '../src/hosts/cloudfront.js';
import { checkLiveUrl } from '../src/hosts/live-url.js';
import { netlifyRedirects } from '../src/hosts/netlify.js';
import { nginxConfig } from '../src/hosts/nginx.js';
import { KIT, tempDir, testSpec } from './helpers.js';

// A live URL goes verbatim into nginx's proxy_pass, Netlify's _redirects and CloudFront's origin:
// every config it enters refuses one holding a character that config reads as syntax.

const CONFIGS = {
  nginx: (url: string) => nginxConfig(testSpec(), { liveUrl: url }),
  cloudfront: (url: string) => cloudFrontFunction(testSpec({ liveUrl: url })),
  netlify: (url: string) => netlifyRedirects(testSpec({ liveUrl: url })),
} as const;

const UNSAFE = [
  ['an nginx variable', 'https://live.example.org/a$host', '$', '%24'],
  ['the end of an nginx directive', 'http://127.0.0.1:8080/x;return', ';', '%3B'],
  ['a Netlify placeholder', 'https://live.example.org/:splat', ':', '%3A'],
  ['a Netlify splat', 'https://live.example.org/a*', '*', '%2A'],
  ['a quote', "https://live.example.org/it's", "'", '%27'],
] as const;

describe.each(Object.entries(CONFIGS))('%s config', (_, config) => {
  it.each(UNSAFE)('refuses %s in the live URL', (_, url, char, encoded) => {
    expect(() => config(url)).toThrow(CitiesApiError);
    expect(() => config(url)).toThrow(`holds "${char}"`);
    expect(() => config(url)).toThrow(encoded);
  });

  it.each([
    ['a percent-encoded dollar', 'https://live.example.org/a%24host', 'https://live.example.org/a%24host'],
    ['a port and a path', 'http://127.0.0.1:8080/base/', 'http://127.0.0.1:8080/base'],
  ])('keeps %s as given', (_, url, kept) => {
    expect(config(url)).toContain(kept);
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
