import { execFile, spawn } from 'node:child_process';
import { copyFile, lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAME_FIELDS } from '../src/core/fields.js';
import { BEHIND_PATH } from '../src/site/behind.js';
import { build } from '../src/app/build.js';
import { specOf } from '../src/site/manifest.js';
import { DEFAULT_PAGE_SIZES } from '../src/site/spec.js';
import { readManifest } from '../src/store/manifest-file.js';
import { atLeastPattern, nginxConfig } from '../src/hosts/nginx.js';
import { copyKitSite, kitSite } from './edge-helpers.js';
import { DOT_SEGMENT_TARGETS, KIT, KIT_DATASETS, expectWholeKit, replayKit, tempDir } from './helpers.js';
import { freePort, startNginx } from './nginx-tls.js';
import { asSent, rawRequest, startCli } from './serve-helpers.js';
import { requireTool } from './tool-check.js';
import { caughtUp, sleep } from './crash-helpers.js';

const NGINX = '/usr/sbin/nginx';
const available = requireTool('nginx', NGINX, 'apt-get install -y nginx-light');

describe('atLeastPattern matches exactly the integers >= n', () => {
  it.each([[0], [1], [9], [10], [48], [99], [100], [1234], [30], [11]])('n = %d', (n) => {
    const re = new RegExp(`^(?:${atLeastPattern(n)})$`);
    // The integers the pattern gets wrong, in one expect (an expect per integer was 30,000 of them: 3-5 CPU-s).
    const wrong = Array.from({ length: 3001 }, (_, k) => k).filter((k) => re.test(String(k)) !== k >= Math.max(n, 1));
    expect(wrong).toEqual([]);
    expect(re.test('1000000000000000000000')).toBe(true);
    expect(re.test('048')).toBe(false);
  });
});

/** A real nginx on a loopback port, with the site as root and the generated config included. */
async function nginxWith(
  dir: string,
  site: string,
  config: string,
): Promise<{ url: string; stop: () => Promise<void>; log: () => Promise<string> }> {
  const port = await freePort();
  await mkdir(join(dir, 'logs'), { recursive: true });
  await writeFile(join(dir, 'cities-api.conf'), config);
  await writeFile(
    join(dir, 'nginx.conf'),
    `
user root;
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${site};
    include ${dir}/cities-api.conf;
  }
}
`,
  );
  await promisify(execFile)(NGINX, ['-t', '-p', dir, '-c', join(dir, 'nginx.conf')]);
  const { stop } = await startNginx(NGINX, dir, port);
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => readFile(join(dir, 'logs/error.log'), 'utf8').catch(() => ''),
    stop,
  };
}

/** `cities-api serve` building `site` from the kit's 48 cities, on a free port. */
function liveKit48(site: string, ...more: string[]): ReturnType<typeof startCli> {
  return startCli([
    site,
    '--data',
    join(KIT, 'cities48.csv'),
    '--base-url',
    'http://api.example.com',
    '--port',
    '0',
    ...more,
  ]);
}

// The production shape: nginx answers from the files, `cities-api serve` behind it answers the
// rest. The whole conformance kit, every level, replayed through nginx by the kit's run.mjs.
describe.runIf(available)('the conformance kit through a real nginx in front of cities-api serve', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  const totals = { passed: 0, failed: 0, fromFiles: 0 };
  // The kit's 48 cities as `serve --data` builds them (with .gz/.br), one server for the cases that only read them.
  let kit48: Promise<{ site: string; live: Awaited<ReturnType<typeof startCli>> }> | undefined;
  const shared48 = () =>
    (kit48 ??= (async () => {
      const site = join(root, 'kit48', 'site');
      return { site, live: await liveKit48(site, '--collation', 'codepoint') };
    })());
  beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-nginx-')));
  afterAll(async () => {
    console.log(
      `conformance through nginx + cities-api serve: ${totals.passed} of ${totals.passed + totals.failed} answers match; ${totals.fromFiles} of them answered by nginx from files`,
    );
    if (kit48) await (await kit48).live.stop();
    await cleanup();
  });

  /**
   * A kit dataset's site and its live server. With .gz/.br (fetch asks for gzip: nginx's gzip_static answers are
   * replayed too), built by `serve --data`, but cities1234's: the run's shared kit site (kitSite: the same settings,
   * no .gz/.br) served in place, as a compressed build of it is 16 CPU-s, a third of this file's.
   */
  async function kitServer(
    name: string,
    baseUrl: string,
  ): Promise<{ site: string; stop: () => Promise<void>; url: string }> {
    if (name === 'cities48') {
      const { site, live } = await shared48();
      return { site, url: live.url, stop: async () => {} };
    }
    if (name === 'cities1234') {
      const site = await kitSite(name, baseUrl);
      return { site, ...(await startCli([site, '--port', '0'])) };
    }
    const site = join(root, name, 'site');
    const data = join(KIT, `${name}.csv`);
    const args = [site, '--data', data, '--base-url', baseUrl, '--collation', 'codepoint', '--port', '0'];
    return { site, ...(await startCli(args)) };
  }

  it.each(KIT_DATASETS)('$name: every answer matches', async ({ name, baseUrl, prefix }) => {
    const live = await kitServer(name, baseUrl);
    const config = nginxConfig(specOf((await readManifest(live.site))!), { liveUrl: live.url, site: live.site });
    const nginx = await nginxWith(join(root, name), live.site, config);
    try {
      await expectWholeKit(nginx.url, name, prefix, totals, ['--verbose']);
      // Which answers came from files: nginx sends its own ETag (strong, "mtime-size"); serve's are weak.
      const kit = (await readFile(join(KIT, `${name}.requests.txt`), 'utf8'))
        .split('\n')
        .filter((l) => l.startsWith('/cities/'));
      for (const target of kit) {
        const res = await rawRequest(`${nginx.url}${prefix}${target}`);
        if (/^"[0-9a-f]+-[0-9a-f]+"$/.test(String(res.headers.etag))) totals.fromFiles++;
      }
    } finally {
      await nginx.stop();
      await live.stop();
    }
  });

  // A user rebuilds the site on every data change and rarely regenerates the server config.
  it.each([
    ['11 -> 48 cities', 'cities11', '10,20,50,100', 'cities48', '10,20,50,100'],
    ['48 -> 11 cities', 'cities48', '10,20,50,100', 'cities11', '10,20,50,100'],
    ['page sizes 10,20 -> 5,50', 'cities48', '10,20', 'cities48', '5,50'],
  ])(
    'a config generated before a rebuild (%s) answers the new data exactly',
    async (label, before, beforeSizes, after, afterSizes) => {
      const dir = join(root, label.replace(/\W+/g, '-'));
      const site = join(dir, 'site');
      const baseUrl = 'http://api.example.com';
      // The site as built before: the run's shared kit site copied (default page sizes), or built here.
      if (beforeSizes === DEFAULT_PAGE_SIZES.join()) await copyKitSite(before, baseUrl, site);
      else {
        const pageSizes = beforeSizes.split(',').map(Number);
        await build({ data: join(KIT, `${before}.csv`), out: site, baseUrl, collation: 'codepoint', pageSizes });
      }
      const spec = specOf((await readManifest(site))!);
      // Rebuilt for the new data by the live server, then nginx with the config of the site before.
      const live = await startCli([
        site,
        '--data',
        join(KIT, `${after}.csv`),
        '--base-url',
        baseUrl,
        '--collation',
        'codepoint',
        '--page-sizes',
        afterSizes,
        '--port',
        '0',
      ]);
      expect(specOf((await readManifest(site))!).count).toBe(after === 'cities48' ? 48 : 11);
      const nginx = await nginxWith(dir, site, nginxConfig(spec, { liveUrl: live.url, site }));
      try {
        const { passed, failed, failures } = await replayKit(nginx.url, after, '', ['--verbose']);
        expect(failures).toEqual([]);
        expect([passed, failed]).toEqual([80, 0]);
      } finally {
        await nginx.stop();
        await live.stop();
      }
    },
  );

  // serve --writable behind nginx: a 201, then a GET through nginx, must include the city even
  // while the files are behind (the build is held here by a live process's lock).
  it('after a POST through nginx, every GET through it includes the city: live while the files are behind, from the files once they caught up', async () => {
    const dir = join(root, 'writable');
    const site = join(dir, 'site');
    await mkdir(dir, { recursive: true });
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const token = 'nginx-test-token-0123456789';
    const live = await startCli(
      [
        site,
        '--data',
        data,
        '--base-url',
        'http://api.example.com',
        '--collation',
        'codepoint',
        '--port',
        '0',
        '--writable',
      ],
      { CITIES_API_TOKEN: token },
    );
    const nginx = await nginxWith(
      dir,
      site,
      nginxConfig(specOf((await readManifest(site))!), { liveUrl: live.url, site }),
    );
    const holder = spawn('sleep', ['600']);
    const fromFile = (res: { headers: Record<string, unknown> }) =>
      /^"[0-9a-f]+-[0-9a-f]+"$/.test(String(res.headers.etag));
    const targets = ['/cities/', '/cities/?page=2', '/cities/?ordering=-name_en', '/cities/?page_size=100'];
    const counts = async () =>
      Promise.all(
        targets.map(async (t) => {
          const res = await rawRequest(`${nginx.url}${t}`);
          return { count: (JSON.parse(res.body.toString()) as { count: number }).count, file: fromFile(res) };
        }),
      );
    try {
      expect(await counts()).toEqual(targets.map(() => ({ count: 11, file: true })));
      await writeFile(join(dir, '.site.lock'), `${holder.pid}\n`);
      const created = await rawRequest(`${nginx.url}/cities/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Token ${token}` },
        body: JSON.stringify(Object.fromEntries(NAME_FIELDS.map((f) => [f, 'Behind nginx']))),
      });
      expect(created.status).toBe(201);
      expect(await counts()).toEqual(targets.map(() => ({ count: 12, file: false })));
      holder.kill();
      await rm(join(dir, '.site.lock'));
      await caughtUp(data);
      for (let i = 0; i < 100 && (await lstat(join(site, BEHIND_PATH)).catch(() => null)); i++) await sleep(50);
      // All cities on one page is a file named after the count, which this config (11) does not name.
      expect(await counts()).toEqual(targets.map((t) => ({ count: 12, file: !t.includes('page_size') })));
      const log = await nginx.log();
      expect(log, log).not.toMatch(/\[(error|crit|alert|emerg)\]/);
    } finally {
      holder.kill();
      await nginx.stop();
      await live.stop();
    }
  });

  it('answers from files carry the reference headers, gzip and 304s', async () => {
    const { site, live } = await shared48();
    const nginx = await nginxWith(
      join(root, 'headers'),
      site,
      nginxConfig(specOf((await readManifest(site))!), { liveUrl: live.url }),
    );
    try {
      const res = await rawRequest(`${nginx.url}/cities/?page=2&ordering=-name_ar`);
      expect(res.headers).toMatchObject({
        allow: 'GET, POST, HEAD, OPTIONS',
        vary: 'Accept',
        'content-type': 'application/json',
        'access-control-allow-origin': '*',
      });
      expect(res.body.equals(await readFile(join(site, 'cities/-name_ar/default/2.json')))).toBe(true);
      const gz = await rawRequest(`${nginx.url}/cities/?page=2`, { headers: { 'Accept-Encoding': 'gzip' } });
      expect([gz.headers['content-encoding'], gz.headers.vary]).toEqual(['gzip', 'Accept']);
      const again = await rawRequest(`${nginx.url}/cities/?page=2`, {
        headers: { 'If-None-Match': String(res.headers.etag ?? '') },
      });
      expect(again.status).toBe(200);
      const same = await rawRequest(`${nginx.url}/cities/?page=2`);
      expect(
        (await rawRequest(`${nginx.url}/cities/?page=2`, { headers: { 'If-None-Match': String(same.headers.etag) } }))
          .status,
      ).toBe(304);
      const html = await rawRequest(`${nginx.url}/cities/?page=2`, { headers: { Accept: 'text/html' } });
      expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
      // Whatever the Accept header, nginx answers as the live server does (it was matched as a substring,
      // case-sensitively: `*/html`, `TEXT/HTML` and `application/jsonx` got the JSON file).
      const accepts = [
        '*/*',
        'application/json',
        'APPLICATION/JSON',
        ' application/* ',
        '*/json',
        'image/png, */*',
        'text/plain',
        'application/jsonx',
        '*/html, */*',
        'TEXT/HTML, */*',
        'Text/*,application/json',
        'application/json;q=1',
        '*/*, \x85text/*',
        '\x85application/json',
        'application/jsonx, image/*',
      ];
      for (const accept of accepts) {
        const get = (url: string) => rawRequest(`${url}/cities/?page=2`, { headers: { Accept: accept } });
        const [viaNginx, direct] = [await get(nginx.url), await get(live.url)];
        expect([viaNginx.status, viaNginx.headers['content-type'], viaNginx.body.toString()], accept).toEqual([
          direct.status,
          direct.headers['content-type'],
          direct.body.toString(),
        ]);
      }
      const log = await nginx.log();
      expect(log, log).not.toMatch(/\[(error|crit|alert|emerg)\]/);
    } finally {
      await nginx.stop();
    }
  });

  // nginx resolves dot segments (also %2E) and merges slashes before it matches a location: such a path
  // reached the files as the endpoint (200). The reference answers it 404, as serve does: it goes live, as sent.
  it('dot segments and double slashes: the answer serve gives the path as sent (404), the endpoint still from files', async () => {
    const { site, live } = await shared48();
    const config = nginxConfig(specOf((await readManifest(site))!), { liveUrl: live.url });
    const nginx = await nginxWith(join(root, 'dot-segments'), site, config);
    try {
      const answers = async (url: string) =>
        Promise.all(
          DOT_SEGMENT_TARGETS.map(async (target) => {
            const { status, body } = await asSent(url, target);
            return [target, status, body.toString()];
          }),
        );
      const direct = await answers(live.url);
      expect(direct.map(([target, status]) => [target, status])).toEqual(DOT_SEGMENT_TARGETS.map((t) => [t, 404]));
      expect(await answers(nginx.url)).toEqual(direct);
      const page = await asSent(nginx.url, '/cities/?page=2');
      expect([page.status, page.headers.etag]).toEqual([200, expect.stringMatching(/^"[0-9a-f]+-[0-9a-f]+"$/)]);
    } finally {
      await nginx.stop();
    }
  });

  // docs/nginx.md's check: a site nginx cannot read still answers (the live server's copy), and the ETag tells.
  it.each([
    ['nginx reads the site: its own strong ETag (hex mtime-size)', true, /^"[0-9a-f]+-[0-9a-f]+"$/],
    ["nginx cannot read the site: the live server's copy, a weak ETag (decimal)", false, /^W\/"\d+-\d+"$/],
  ])('the ETag tells who answered: %s', async (_, readable, etag) => {
    const dir = join(root, `etag-${readable}`);
    const { site, live } = await shared48();
    // nginx's root elsewhere stands for a site it cannot read (the tests' nginx runs as root, which reads everything).
    const served = readable ? site : join(dir, 'unreadable');
    await mkdir(served, { recursive: true });
    const nginx = await nginxWith(dir, served, nginxConfig(specOf((await readManifest(site))!), { liveUrl: live.url }));
    try {
      const res = await rawRequest(`${nginx.url}/cities/?page=2`, { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(String(res.headers.etag)).toMatch(etag);
    } finally {
      await nginx.stop();
    }
  });

  // What a user passes ends up in the config: a base URL's path (decoded, as nginx matches it) and the site's path
  // (in a comment). Neither may be read as nginx syntax: the config passes nginx -t and serves the files.
  it.each([
    ['a ;', 'https://example.org/a;b'],
    ['a space', 'https://example.org/my api'],
    ['braces', 'https://example.org/{v1}'],
    ['a quote and a backslash', 'https://example.org/a"b%5Cc'],
    ['a newline (%0A)', 'https://example.org/a%0Ab'],
    ['a $', 'https://example.org/a$host'],
  ])('a base URL whose path holds %s, the site in a directory whose name holds a newline', async (_, baseUrl) => {
    const dir = join(root, `syntax-${baseUrl.length}-${baseUrl.charCodeAt(22)}`);
    const site = join(dir, 'site');
    await build({
      data: join(KIT, 'cities48.csv'),
      out: site,
      baseUrl,
      orderings: ['default'],
      pageSizes: [10],
      compression: 'none',
    });
    const spec = specOf((await readManifest(site))!);
    const named = `${site}\nlocation / { return 200 "not the site"; }\n#`;
    const config = nginxConfig(spec, { liveUrl: 'http://127.0.0.1:9', site: named });
    expect(config.split('\n').filter((line) => line.startsWith('location /'))).toEqual([]);
    const nginx = await nginxWith(dir, site, config);
    try {
      const res = await rawRequest(`${nginx.url}${new URL(spec.baseUrl).pathname}/cities/?page=2`);
      expect(res.status, res.body.toString()).toBe(200);
      expect(res.body.equals(await readFile(join(site, 'cities/default/default/2.json')))).toBe(true);
    } finally {
      await nginx.stop();
    }
  });
});
