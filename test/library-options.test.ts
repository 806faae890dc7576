import { cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, CitiesApiError, SAMPLE_DATASET, serve, type BuildOptions, type ServeOptions } from '../src/index.js';
import { tempDir } from './helpers.js';

// build() and serve() as a JavaScript caller may call them, no type checking its options: each
// wrong one is a CitiesApiError naming the option (exit 2), before anything is read or written;
// never a TypeError from deep inside, an option ignored, or a site recorded with a value no build knows.

let dir: string;
let data: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('cities-lib-options-'));
  data = join(dir, 'cities.csv');
  await cp(SAMPLE_DATASET, data);
});
afterAll(() => cleanup());

/** What a call from JavaScript passes: anything. */
const loose = (options: Record<string, unknown>) => options as unknown;

describe('build(): a wrong option is a CitiesApiError naming it, nothing written', () => {
  it.each([
    ['no options at all', undefined, /build\(\) takes an object of options/],
    ['options not an object', 42, /build\(\) takes an object of options .*not 42/],
    ['out a number', loose({ out: 5 }), /option `out` must be a string, not 5/],
    [
      'a misspelt option (pagesizes)',
      loose({ pagesizes: [10] }),
      /no option `pagesizes` \(did you mean `pageSizes`\?\)/,
    ],
    ['an unknown option', loose({ pages: 3 }), /no option `pages`; its options: data, /],
    ['orderings holding a number', loose({ orderings: [5] }), /option `orderings` must be an array/],
    ['pageSizes an object', loose({ pageSizes: { 10: true } }), /option `pageSizes` must be an array/],
    ['an unknown collation', loose({ collation: 'xx' }), /invalid collation "xx": use locale or codepoint/],
    ['collation a number', loose({ collation: 5 }), /option `collation` must be a string, not 5/],
    ['baseUrl a number', loose({ baseUrl: 5 }), /option `baseUrl` must be a string, not 5/],
    ['signal not an AbortSignal', loose({ signal: 'stop' }), /option `signal` must be an AbortSignal/],
    ['maxFiles a string', loose({ maxFiles: '10' }), /option `maxFiles` must be a whole number of files/],
    ['maxFiles negative', loose({ maxFiles: -1 }), /option `maxFiles` must be a whole number of files/],
    ['minFree not a number', loose({ minFree: 'a' }), /option `minFree` must be a whole number of bytes/],
    ['minFree negative', loose({ minFree: -5 }), /option `minFree` must be a whole number of bytes/],
    ['compress a string', loose({ compress: 'no' }), /option `compress` must be true or false/],
    ['strict a string', loose({ strict: 'yes' }), /option `strict` must be true or false/],
    ['cwd a number', loose({ cwd: 5 }), /option `cwd` must be a string/],
    ['onStart not a function', loose({ onStart: 'x' }), /option `onStart` must be a function/],
    ['log not a function', loose({ log: 5 }), /option `log` must be a function/],
  ])('%s', async (name, options, message) => {
    const out = join(dir, name.replace(/\W+/g, '-'));
    const given = options && typeof options === 'object' ? { data, out, ...options } : options;
    const error = await build(given as BuildOptions).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({ exitCode: 2, message: expect.stringMatching(message) });
    expect((await readdir(dir)).filter((f) => f.includes(name.replace(/\W+/g, '-')))).toEqual([]);
  });

  it.each([
    ['null options are left out', loose({ pageSizes: null, orderings: null, signal: null })],
    ['page sizes and orderings as the CLI writes them', loose({ pageSizes: '20', orderings: 'default,name_en' })],
  ])('%s', async (name, options) => {
    const out = join(dir, name.replace(/\W+/g, '-'));
    const result = await build({ data, out, compression: 'none', ...(options as object) });
    expect(result.cities).toBe(48);
  });
});

describe('serve(): a wrong option is a CitiesApiError naming it, nothing left listening', () => {
  it.each([
    ['options not an object', 'dist', /serve\(\) takes an object of options/],
    ['port negative', loose({ port: -1 }), /option `port` must be a whole number from 0 to 65535/],
    ['port above 65535', loose({ port: 70000 }), /option `port` must be a whole number from 0 to 65535/],
    ['port NaN', loose({ port: Number.NaN }), /option `port` must be a whole number from 0 to 65535/],
    ['port a fraction', loose({ port: 1.5 }), /option `port` must be a whole number from 0 to 65535/],
    ['port a string not of digits', loose({ port: '80a' }), /option `port` must be a whole number from 0 to 65535/],
    ['host a number', loose({ host: 5 }), /option `host` must be a string, not 5/],
    ['dir a number', loose({ dir: 5 }), /option `dir` must be a string, not 5/],
    ['data a number', loose({ data: 5 }), /option `data` must be a string, not 5/],
    ['token a number', loose({ writable: true, data: 'x.csv', token: 12345 }), /option `token` must be a string/],
    ['limits a string', loose({ limits: 'x' }), /option `limits` must be an object/],
    ['lockWait a string', loose({ lockWait: 'x' }), /option `lockWait` must be a whole number of ms/],
    ['a misspelt option (prot)', loose({ prot: 0 }), /no option `prot`; its options: dir, /],
    ['firstBuild callback not a function', loose({ firstBuild: { onStart: 1 } }), /`firstBuild.onStart` must be a/],
    ['a collation no build knows', loose({ data: SAMPLE_DATASET, collation: 'xx' }), /invalid collation "xx"/],
  ])('%s', async (name, options, message) => {
    const site = join(dir, `serve-${name.replace(/\W+/g, '-')}`);
    const given = options && typeof options === 'object' ? { port: 0, dir: site, ...options } : options;
    const error = await serve(given as ServeOptions).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({ exitCode: 2, message: expect.stringMatching(message) });
    expect((await readdir(dir)).filter((f) => f.includes(name.replace(/\W+/g, '-')))).toEqual([]);
  });
});

describe('serve(): a port as process.env gives it', () => {
  it.each([['a string of digits', '0']])('%s (%s) is listened on', async (_, port) => {
    const site = join(dir, 'env-port');
    await build({ data, out: site, orderings: ['default'], pageSizes: [10], compression: 'none' });
    const server = await serve(loose({ dir: site, port }) as ServeOptions);
    try {
      expect((await fetch(`${server.url}/cities/`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('serve(): a host or port it cannot listen on is a CitiesApiError saying so', () => {
  it.each([
    [
      'a host name that does not resolve',
      'no-such-host.invalid',
      /cannot listen on no-such-host.invalid: no such host name/,
    ],
    ['an address not of this machine', '192.0.2.1', /cannot listen on 192.0.2.1: it is no address of this machine/],
  ])('%s', async (_, host, message) => {
    const error = await serve({ dir: join(dir, 'site'), port: 0, host }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CitiesApiError);
    expect(error).toMatchObject({ exitCode: 1, message: expect.stringMatching(message) });
  });
});

describe("serve(): a caller's log callback that throws does not take the server down", () => {
  it.each([
    [
      'requestLog',
      {
        requestLog: () => {
          throw new Error('requestLog failed');
        },
      },
    ],
    [
      'log',
      {
        log: () => {
          throw new Error('log failed');
        },
      },
    ],
  ])('%s: requests answered past its 1 s flush, close() resolves, one warning', async (_, callbacks) => {
    const site = join(dir, 'throwing-log');
    await build({ data, out: site, orderings: ['default'], pageSizes: [10], compression: 'none' });
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(warning.message);
    process.on('warning', warned);
    try {
      const server = await serve({ dir: site, port: 0, ...callbacks });
      for (const wait of [0, 1200]) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        const answer = await fetch(`${server.url}/cities/`);
        expect(answer.status).toBe(200);
        await answer.arrayBuffer();
      }
      await expect(server.close()).resolves.toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([
        expect.stringMatching(/callback threw \((requestLog|log) failed\): its lines are dropped/),
      ]);
    } finally {
      process.off('warning', warned);
    }
  });
});
