import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFile, lstat, lutimes, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { build } from '../src/app/build.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { serve, type RunningServer, type ServeOptions } from '../src/app/serve.js';
import { appears, caughtUp, manyCities, sleep, spawnCli, writeDataset } from './crash-helpers.js';
import { KIT, makeCity, tempDir, entriesOf } from './helpers.js';
import { createAt as createAtWith, rawRequest, servedAt, smallWritable, writableCli } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

const TOKEN = 'test-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
let server: RunningServer;
const datasets = { csv: '', json: '' };
const names = (name: string) => Object.fromEntries(NAME_FIELDS.map((f) => [f, name]));
const post = (body: unknown, headers: Record<string, string> = {}, raw?: string) =>
  rawRequest(server.apiUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}`, ...headers },
    body: raw ?? JSON.stringify(body),
  });
const json = (body: Buffer) => JSON.parse(body.toString()) as Record<string, unknown>;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cities-write-'));
  datasets.csv = join(root, 'cities.csv');
  datasets.json = join(root, 'cities.json');
  await copyFile(join(KIT, 'cities11.csv'), datasets.csv);
  await copyFile(join(KIT, 'cities11.json'), datasets.json);
  // One ordering and page size in files: each catch-up build after a POST is a few files.
  server = await smallWritable(join(root, 'site'), datasets.csv, TOKEN);
});
afterAll(async () => {
  await server.close();
  await cleanup();
});

describe('POST needs the token', () => {
  it.each([
    ['no Authorization header', {}, 'Authentication credentials were not provided.'],
    ['another scheme', { Authorization: `Bearer ${TOKEN}` }, 'Authentication credentials were not provided.'],
    ['Token without a key', { Authorization: 'Token' }, 'Invalid token header. No credentials provided.'],
    [
      'a key with spaces',
      { Authorization: 'Token a b' },
      'Invalid token header. Token string should not contain spaces.',
    ],
    ['a wrong key', { Authorization: 'Token wrong' }, 'Invalid token.'],
    ['the key with a different case', { Authorization: `Token ${TOKEN.toUpperCase()}` }, 'Invalid token.'],
  ])('%s → 401', async (_, headers, detail) => {
    const res = await rawRequest(server.apiUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(names('X')),
    });
    expect([res.status, json(res.body), res.headers['www-authenticate']]).toEqual([401, { detail }, 'Token']);
  });

  it('a writable server will not start without a token', async () => {
    await expect(serve({ dir: join(root, 'site2'), data: datasets.csv, port: 0, writable: true })).rejects.toThrow(
      '`writable` needs a token: set `token`',
    );
  });
});

describe('POST bodies are checked like the reference', () => {
  it.each([
    ['missing names', {}, 400, { name_ar: ['This field is required.'] }],
    ['a list', [1], 400, { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] }],
    [
      'a bad coordinate',
      { ...names('A'), longitude: 'far', latitude: 1 },
      400,
      { longitude: ['A valid number is required.'] },
    ],
  ])('%s → %d', async (_, body, status, errors) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(json(res.body)).toMatchObject(errors);
  });

  it.each([
    ['malformed JSON', { 'Content-Type': 'application/json' }, '{"name_en":', 400, /^JSON parse error - /],
    [
      'an unsupported type',
      { 'Content-Type': 'text/plain' },
      'hello',
      415,
      /^Unsupported media type "text\/plain" in request\.$/,
    ],
    [
      'a body over 64 KiB',
      { 'Content-Type': 'application/json' },
      JSON.stringify({ ...names('A'), pad: 'x'.repeat(70_000) }),
      413,
      /larger than 65536 bytes/,
    ],
  ])('%s → %d', async (_, headers, raw, status, detail) => {
    const res = await post(null, headers, raw);
    expect(res.status).toBe(status);
    expect(json(res.body).detail).toMatch(detail);
  });
});

describe('creating cities', () => {
  it('201 with the new record: id max + 1, timestamps now with microseconds; answers and file include it', async () => {
    const before = (await readDataset(datasets.csv)).toCities();
    const beforeBytes = await readFile(datasets.csv);
    const res = await post({
      ...names('Nouvelle, "Ville"'),
      name_en: 'Zzz New',
      longitude: '10.5',
      latitude: -3,
      top: true,
    });
    expect(res.status).toBe(201);
    const city = json(res.body);
    expect(city).toMatchObject({
      id: Math.max(...before.map((c) => c.id)) + 1,
      name_en: 'Zzz New',
      name_fr: 'Nouvelle, "Ville"',
      longitude: 10.5,
      latitude: -3.0,
      top: true,
    });
    expect(city.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(city.updated_at).toBe(city.created_at);
    await caughtUp(datasets.csv);
    const after = (await readDataset(datasets.csv)).toCities();
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)).toEqual(city);
    expect((await readFile(`${datasets.csv}.bak`)).equals(beforeBytes)).toBe(true);
    const listing = json((await rawRequest(`${server.apiUrl}?page_size=100`)).body) as {
      count: number;
      results: { id: number }[];
    };
    expect(listing.count).toBe(before.length + 1);
    expect(listing.results[0]!.id).toBe(city.id);
  });

  it('a form-encoded POST creates a city too', async () => {
    const form = new URLSearchParams({ ...names('Formville'), longitude: '', latitude: '', top: 'on' }).toString();
    const res = await post(null, { 'Content-Type': 'application/x-www-form-urlencoded' }, form);
    expect([res.status, json(res.body).longitude, json(res.body).top]).toEqual([201, null, true]);
  });

  it('20 parallel creates → 20 new records, distinct ids, the file still valid', async () => {
    await caughtUp(datasets.csv);
    const before = (await readDataset(datasets.csv)).toCities();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post(names(`Parallel ${i}`))));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const ids = results.map((r) => json(r.body).id as number);
    expect(new Set(ids).size).toBe(20);
    expect(json((await rawRequest(server.apiUrl)).body).count).toBe(before.length + 20);
    await caughtUp(datasets.csv);
    const after = (await readDataset(datasets.csv)).toCities();
    expect(after).toHaveLength(before.length + 20);
    expect(
      after
        .slice(-20)
        .map((c) => c.name_en)
        .sort(),
    ).toEqual(Array.from({ length: 20 }, (_, i) => `Parallel ${i}`).sort());
    expect(json((await rawRequest(server.apiUrl)).body).count).toBe(before.length + 20);
  });

  it("POSTs one after another while catch-up builds swap the site in: every one 201 (the behind marker waits out the swap's two renames)", async () => {
    const data = join(root, 'swaps.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    // One ordering, one page size: each catch-up is a build of a few files, so swaps come often.
    const small = await smallWritable(join(root, 'swaps'), data, TOKEN);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 300; i++) {
        statuses.push((await create(small, `Swap ${i}`)).status);
      }
      expect(statuses.filter((status) => status !== 201)).toEqual([]);
      await caughtUp(data);
      expect(await readDataset(data).then((d) => d.count)).toBe(311);
    } finally {
      await small.close();
    }
  });

  it('appends to a JSON dataset as well', async () => {
    const other = await smallWritable(join(root, 'site-json'), datasets.json, TOKEN);
    try {
      const res = await rawRequest(other.apiUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` },
        body: JSON.stringify(names('Jsonville')),
      });
      expect(res.status).toBe(201);
      await caughtUp(datasets.json);
      const cities = (await readDataset(datasets.json)).toCities();
      expect(cities).toHaveLength(12);
      expect(cities.at(-1)!.name_en).toBe('Jsonville');
    } finally {
      await other.close();
    }
  });
});

describe('answers stay whole while another process rebuilds the site', () => {
  // The layout of the pages the hammer asks from files (the page of 7 is live); a bigger site would only take longer.
  const LAYOUT = { pageSizes: [10, 20], orderings: ['default', '-name_ar'] };
  it('every answer during a rebuild is complete JSON, and the new data is served after', async () => {
    const dir = join(root, 'external');
    await build({
      data: join(KIT, 'cities48.csv'),
      out: dir,
      baseUrl: 'http://x',
      collation: 'codepoint',
      ...LAYOUT,
    });
    const watched = await serve({ dir, port: 0 });
    try {
      let stop = false;
      const answers: number[] = [];
      const hammer = (async () => {
        while (!stop) {
          for (const q of ['', '?page=2', '?ordering=-name_ar&page_size=20&page=2', '?page_size=7']) {
            const res = await rawRequest(`${watched.apiUrl}${q}`);
            answers.push((JSON.parse(res.body.toString()) as { count: number }).count);
          }
        }
      })();
      await build({
        data: join(KIT, 'prefixed30.csv'),
        out: dir,
        baseUrl: 'http://x',
        collation: 'codepoint',
        ...LAYOUT,
      });
      // The server notices the new build once its watcher and reload have run: bounded by the test's time, not a fixed window (at load 25, 5 s was not enough).
      await vi.waitFor(() => expect(answers.at(-1)).toBe(30), { timeout: 150_000, interval: 50 });
      stop = true;
      await hammer;
      expect(answers.length).toBeGreaterThan(10);
      expect(new Set(answers)).toEqual(new Set([48, 30]));
      expect(answers.at(-1)).toBe(30);
      expect((await stat(join(dir, '_cities-api/manifest.json'))).isFile()).toBe(true);
      expect(await readFile(join(dir, 'cities/default/default/1.json'), 'utf8')).toContain('"count":30');
    } finally {
      await watched.close();
    }
  });
});

/** A writable server of its own, on a copy of cities11 in `root/name/`, waiting at most `lockWait` for locks. */
async function writable(name: string, extra: Partial<ServeOptions> = {}) {
  const dir = join(root, name);
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  await copyFile(join(KIT, 'cities11.csv'), data);
  const logs: string[] = [];
  const server = await serve({
    dir: join(dir, 'site'),
    data,
    port: 0,
    writable: true,
    token: TOKEN,
    collation: 'codepoint',
    pageSizes: [10],
    orderings: ['default'],
    lockWait: 300,
    log: (l) => logs.push(l),
    ...extra,
  });
  return { dir, data, server, logs };
}
const create = (to: RunningServer, name: string) =>
  rawRequest(to.apiUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` },
    body: JSON.stringify(names(name)),
  });
/** The English names a server answers with (all of them: cities11 and a few more). */
const served = async (from: RunningServer) =>
  (json((await rawRequest(`${from.apiUrl}?page_size=100`)).body).results as { name_en: string }[]).map(
    (c) => c.name_en,
  );
const inFile = async (file: string) => (await readDataset(file)).toCities().map((c) => c.name_en);
const REFERENCE_HEADERS = {
  'content-type': 'application/json',
  allow: 'GET, POST, HEAD, OPTIONS',
  vary: 'Accept',
  'x-frame-options': 'DENY',
};
const DEAD_PID = 2 ** 22 + 7;

describe('a POST is committed whole (in the file and answered, 201) or not written at all', () => {
  const holders: ChildProcess[] = [];
  /** A live process that is not this one, to hold a lock. */
  const liveHolder = () => holders[holders.push(spawn('sleep', ['600'])) - 1]!.pid!;
  afterAll(() => holders.forEach((h) => h.kill()));

  it("the dataset's lock (another server adding cities) held by another process past the wait: 503, Retry-After, JSON detail, nothing written; once released the next POST is committed and served", async () => {
    const lock = '.cities.csv.lock';
    const w = await writable('busy-dataset-lock');
    try {
      const before = await readFile(w.data);
      await writeFile(join(w.dir, lock), `${liveHolder()}\n`);
      const refused = await create(w.server, 'Refused');
      expect([refused.status, json(refused.body)]).toEqual([
        503,
        { detail: 'Another process is updating this data; nothing was written. Try again in 1 s.' },
      ]);
      expect(refused.headers).toMatchObject({ ...REFERENCE_HEADERS, 'retry-after': '1' });
      expect((await readFile(w.data)).equals(before)).toBe(true);
      expect(await entriesOf(w.dir)).toEqual([lock, 'cities.csv', 'site'].sort());
      await rm(join(w.dir, lock));
      expect((await create(w.server, 'Accepted')).status).toBe(201);
      expect(await served(w.server)).toEqual(expect.arrayContaining(['Accepted']));
      expect(await served(w.server)).not.toContain('Refused');
      await caughtUp(w.data);
      expect((await inFile(w.data)).slice(11)).toEqual(['Accepted']);
    } finally {
      await w.server.close();
    }
  });

  it("the site's build lock (another build of the site) held past the wait: the POST is still acknowledged (201) and answered at once; the files and the dataset file catch up once the lock is released", async () => {
    const lock = '.site.lock';
    const w = await writable('busy-site-lock');
    try {
      const before = await readFile(w.data);
      await writeFile(join(w.dir, lock), `${liveHolder()}\n`);
      expect((await create(w.server, 'Logged')).status).toBe(201);
      expect(await served(w.server)).toContain('Logged');
      await sleep(1500);
      expect((await readFile(w.data)).equals(before)).toBe(true);
      expect(w.logs.join('\n')).toMatch(
        /the site is behind the data \(retrying in 1 s\): another build of .*site is running/,
      );
      await rm(join(w.dir, lock));
      await caughtUp(w.data);
      expect((await inFile(w.data)).slice(11)).toEqual(['Logged']);
      expect(await served(w.server)).toContain('Logged');
    } finally {
      await w.server.close();
    }
  });

  it.each([
    ["the site's build lock", '.site.lock'],
    ["the dataset's lock", '.cities.csv.lock'],
  ])('%s released while the POST waits: the POST is committed (201), not refused', async (_, lock) => {
    const w = await writable(`wait${lock}`, { lockWait: 20_000 });
    try {
      await writeFile(join(w.dir, lock), `${liveHolder()}\n`);
      const answer = create(w.server, 'Waited');
      await sleep(400);
      await rm(join(w.dir, lock));
      expect((await answer).status).toBe(201);
      expect(await served(w.server)).toContain('Waited');
    } finally {
      await w.server.close();
    }
  });

  it.each([
    ['.site.lock', "a dead process's", `${DEAD_PID}\n`],
    ['.cities.csv.lock', "a dead process's", `${DEAD_PID}\n`],
    ['.site.lock', 'a garbage', 'not a pid\n'],
    ['.cities.csv.lock', 'an empty', ''],
  ])('%s: %s lock is taken over at once', async (lock, kind, content) => {
    const w = await writable(`taken-${kind.split(' ')[1]}${lock}`, { lockWait: 60_000 });
    try {
      await writeFile(join(w.dir, lock), content);
      const started = performance.now();
      expect((await create(w.server, 'After a crash')).status).toBe(201);
      expect(performance.now() - started).toBeLessThan(30_000);
      expect(await served(w.server)).toContain('After a crash');
    } finally {
      await w.server.close();
    }
  });

  it('a dataset broken by hand: 500, the file left as it is; once repaired, the next POST is committed and served', async () => {
    const w = await writable('broken');
    try {
      const good = await readFile(w.data);
      await writeFile(w.data, `${good}not,a,row\n`);
      const failed = await create(w.server, 'Lost');
      expect([failed.status, json(failed.body)]).toEqual([500, { detail: 'A server error occurred.' }]);
      expect(w.logs.join('\n')).toMatch(/invalid dataset .*cities\.csv/);
      expect((await readFile(w.data)).toString()).toBe(`${good}not,a,row\n`);
      await writeFile(w.data, good);
      expect((await create(w.server, 'Repaired')).status).toBe(201);
      expect(await served(w.server)).toContain('Repaired');
    } finally {
      await w.server.close();
    }
  });

  it('a POST while another process really builds the same site: answered at once, folded in only once that build is done, then served', async () => {
    const w = await writable('real-build', { lockWait: 60_000 });
    try {
      const other = join(w.dir, 'other.csv');
      await writeDataset(other, manyCities(300, 'Other'));
      const before = await readFile(w.data);
      const builder = spawnCli([
        'build',
        '--data',
        other,
        '--out',
        join(w.dir, 'site'),
        '--collation',
        'codepoint',
        // The server's own links: a site built for deployment would not be folded into (preview-guard.ts).
        '--base-url',
        w.server.url,
        '--page-sizes',
        '10',
        '--orderings',
        'default,name_en,-name_en',
      ]);
      // Stopped (SIGSTOP) as soon as it holds the site's lock: the POST comes while that build holds it, whatever
      // the machine's speed (a build of 1000 cities left that to chance, and cost 3 times the CPU).
      await appears(w.dir, '.site.lock', builder.exited);
      builder.child.kill('SIGSTOP');
      expect(
        await readFile(join(w.dir, '.site.lock'), 'utf8').catch(() => 'no lock'),
        'the build holds the lock',
      ).toMatch(new RegExp(`^${builder.child.pid}\n`));
      expect((await create(w.server, 'During a build')).status).toBe(201);
      expect(await served(w.server)).toContain('During a build');
      // Past the catch-up's wait for a pause in POSTs (250 ms): it waits for the build's lock, the file untouched.
      await sleep(1000);
      expect((await readFile(w.data)).equals(before)).toBe(true);
      builder.child.kill('SIGCONT');
      expect((await builder.exited).code).toBe(0);
      await caughtUp(w.data);
      expect((await inFile(w.data)).at(-1)).toBe('During a build');
      expect(await served(w.server)).toContain('During a build');
    } finally {
      await w.server.close();
    }
  }, 120_000);
});

describe('one failed rebuild does not stop the next (the rebuild queue forgets failures)', () => {
  it('--watch: an invalid save is reported and ignored; the next valid save is served', async () => {
    const w = await writable('watch', { watch: true });
    try {
      const good = await readFile(w.data);
      await writeFile(w.data, `${good}1,broken\n`);
      await until(() => w.logs.some((l) => /changed but was not used: invalid dataset/.test(l)));
      await copyFile(join(KIT, 'prefixed30.csv'), w.data);
      await until(async () => json((await rawRequest(w.server.apiUrl)).body).count === 30);
      // The new site is answered a moment before the rebuild's line is logged.
      await until(() => /changed: rebuilt, now 30 cities/.test(w.logs.at(-1) ?? ''));
      expect((await create(w.server, 'After the watch')).status).toBe(201);
      expect(json((await rawRequest(w.server.apiUrl)).body).count).toBe(31);
    } finally {
      await w.server.close();
    }
  });

  it('--watch: a save while another build holds the site is rebuilt once that build is done', async () => {
    const w = await writable('watch-busy', { watch: true });
    const holder = spawn('sleep', ['600']);
    try {
      await writeFile(join(w.dir, '.site.lock'), `${holder.pid}\n`);
      await copyFile(join(KIT, 'prefixed30.csv'), w.data);
      await until(() => w.logs.some((l) => /changed but was not used: another build/.test(l)));
      await rm(join(w.dir, '.site.lock'));
      await until(async () => json((await rawRequest(w.server.apiUrl)).body).count === 30);
    } finally {
      holder.kill();
      await w.server.close();
    }
  });
});

/** Waits (up to 20 s) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`not reached: ${check.toString()}`);
}

describe('real server processes', () => {
  const cli = (site: string, data: string) => writableCli(site, data, TOKEN);
  const createAt = (url: string, name: string) => createAtWith(url, TOKEN, name);

  it('two writable servers on one dataset file, POSTs to both in parallel: every acknowledged city is in the file once, with a distinct id, and served by the server that acknowledged it', async () => {
    const dir = join(root, 'two-servers');
    await mkdir(dir);
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const servers = await Promise.all(['a', 'b'].map((name) => cli(join(dir, `site-${name}`), data)));
    try {
      const posted = servers.flatMap((s, k) =>
        Array.from({ length: 8 }, (_, i) => ({ url: s.url, name: `Server ${k} city ${i}` })),
      );
      const answers = await Promise.all(posted.map(({ url, name }) => createAt(url, name)));
      expect(answers.map((a) => a.status)).toEqual(posted.map(() => 201));
      const created = answers.map((a) => json(a.body) as { id: number; name_en: string });
      expect(new Set(created.map((c) => c.id)).size).toBe(posted.length);
      await caughtUp(data);
      const cities = (await readDataset(data)).toCities();
      expect(cities).toHaveLength(11 + posted.length);
      for (const city of created)
        expect(cities.filter((c) => c.id === city.id).map((c) => c.name_en)).toEqual([city.name_en]);
      for (const server of servers) {
        const own = posted.filter((p) => p.url === server.url).map((p) => p.name);
        expect(await servedAt(server.url)).toEqual(expect.arrayContaining(own));
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }, 120_000);

  it('disk full while writing (the file size limit of the running server lowered): 500, nothing written; once there is room, the next POST is committed and served', async () => {
    if (!requireTool('prlimit', '/usr/bin/prlimit', 'apt-get install util-linux')) return;
    const dir = join(root, 'disk-full');
    await mkdir(dir);
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const server = await cli(join(dir, 'site'), data);
    const limit = (size: string) =>
      promisify(execFile)('/usr/bin/prlimit', ['--pid', String(server.child.pid), `--fsize=${size}:`]);
    try {
      const before = await readFile(data);
      await limit('16');
      const failed = await createAt(server.url, 'No room');
      expect([failed.status, json(failed.body)]).toEqual([500, { detail: 'A server error occurred.' }]);
      expect(server.output()).toMatch(/EFBIG/);
      expect((await readFile(data)).equals(before)).toBe(true);
      expect(await entriesOf(dir)).toEqual(['cities.csv', 'site']);
      await limit('unlimited');
      expect((await createAt(server.url, 'Room again')).status).toBe(201);
      expect(await servedAt(server.url)).toContain('Room again');
      await caughtUp(data);
      expect((await inFile(data)).slice(11)).toEqual(['Room again']);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe('ids stop at 2^53-1: past it a POST is refused before anything is written', () => {
  it('the last id is given out, the next POST is 500 with a clear detail, the file stays readable and serve still starts', async () => {
    const dir = join(root, 'last-id');
    await mkdir(dir);
    const data = join(dir, 'cities.csv');
    await writeDataset(data, [makeCity(Number.MAX_SAFE_INTEGER - 1)]);
    const options = {
      dir: join(dir, 'site'),
      data,
      port: 0,
      writable: true,
      token: TOKEN,
      collation: 'codepoint' as const,
      orderings: ['default'],
      pageSizes: [10],
    };
    const first = await serve(options);
    try {
      const answers = await Promise.all(['Last', 'One too many'].map((name) => create(first, name)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([201, 500]);
      const accepted = json(answers.find((a) => a.status === 201)!.body);
      expect(accepted.id).toBe(Number.MAX_SAFE_INTEGER);
      const refused = [answers.find((a) => a.status === 500)!, await create(first, 'Later')];
      for (const answer of refused) {
        expect(json(answer.body)).toEqual({
          detail: `No id is left for a new city: the largest id in use is ${Number.MAX_SAFE_INTEGER}, and ids stop at ${Number.MAX_SAFE_INTEGER} (2^53-1, the largest integer JSON clients read exactly). Nothing was written.`,
        });
      }
      await caughtUp(data);
      expect((await readDataset(data)).toCities().map((c) => c.id)).toEqual([
        Number.MAX_SAFE_INTEGER - 1,
        Number.MAX_SAFE_INTEGER,
      ]);
    } finally {
      await first.close();
    }
    const again = await serve(options);
    expect(json((await rawRequest(again.apiUrl)).body).count).toBe(2);
    await again.close();
  });
});

describe('a symlinked dataset is written through its link; links beside it are never followed', () => {
  it.each([
    ['a link', 1],
    ['a link to a link', 2],
  ])(
    '%s: the real file gets the city (and its .bak beside it), each link stays a link, nothing is left beside the links',
    async (_, hops) => {
      const dir = join(root, `linked-${hops}`);
      await mkdir(join(dir, 'real'), { recursive: true });
      await mkdir(join(dir, 'links'));
      const real = join(dir, 'real', 'cities.csv');
      await copyFile(join(KIT, 'cities11.csv'), real);
      await symlink('../real/cities.csv', join(dir, 'links', 'hop1.csv'));
      if (hops === 2) await symlink('hop1.csv', join(dir, 'links', 'hop2.csv'));
      const before = await readFile(real);
      const logs: string[] = [];
      const server = await smallWritable(join(dir, 'site'), join(dir, 'links', `hop${hops}.csv`), TOKEN, {
        log: (l) => logs.push(l),
      });
      try {
        expect(logs.join('\n')).toContain(`(a link to ${real}): POSTs replace ${real}`);
        expect((await create(server, 'Through the link')).status).toBe(201);
        await caughtUp(real);
        expect((await inFile(real)).at(-1)).toBe('Through the link');
        expect((await readFile(`${real}.bak`)).equals(before)).toBe(true);
        for (let hop = 1; hop <= hops; hop++)
          expect((await lstat(join(dir, 'links', `hop${hop}.csv`))).isSymbolicLink()).toBe(true);
        expect((await readdir(join(dir, 'links'))).sort()).toEqual(
          hops === 2 ? ['hop1.csv', 'hop2.csv'] : ['hop1.csv'],
        );
        // The real file's journal of folds beside it too (fold-journal.ts), none beside the links.
        expect((await readdir(join(dir, 'real'))).sort()).toEqual([
          '.cities.csv.folds',
          'cities.csv',
          'cities.csv.bak',
        ]);
        expect(await served(server)).toContain('Through the link');
      } finally {
        await server.close();
      }
    },
  );

  it('a .bak and a temporary file name planted as links to another file: that file is never written, the links are replaced', async () => {
    const dir = join(root, 'planted');
    await mkdir(dir);
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'not yours\n');
    await symlink(victim, `${data}.bak`);
    // The names killed writers left (a staged file's is its writer's own, unknown ahead): a dead process's, one of this pid's from before it started.
    await symlink(victim, join(dir, `.cities.csv.tmp-${2 ** 22}.csv`));
    await symlink(victim, join(dir, `.cities.csv.tmp-${process.pid}.csv`));
    const long = new Date(Date.now() - process.uptime() * 1000 - 3_600_000);
    await lutimes(join(dir, `.cities.csv.tmp-${process.pid}.csv`), long, long);
    const before = await readFile(data);
    const server = await smallWritable(join(dir, 'site'), data, TOKEN);
    try {
      expect((await create(server, 'Planted')).status).toBe(201);
      await caughtUp(data);
      expect(await readFile(victim, 'utf8')).toBe('not yours\n');
      expect((await lstat(`${data}.bak`)).isFile()).toBe(true);
      expect((await readFile(`${data}.bak`)).equals(before)).toBe(true);
      expect(await entriesOf(dir)).toEqual(['cities.csv', 'cities.csv.bak', 'site', 'victim.txt']);
    } finally {
      await server.close();
    }
  });

  it.each([
    [
      'a dangling link',
      async (dir: string) => symlink(join(dir, 'nowhere.csv'), join(dir, 'cities.csv')),
      /the dataset .*cities\.csv is a symbolic link to .*nowhere\.csv, which does not exist; fix the link/,
    ],
    [
      'a link to a directory',
      async (dir: string) => {
        await mkdir(join(dir, 'folder.csv'));
        await symlink('folder.csv', join(dir, 'cities.csv'));
      },
      /`writable` needs the dataset .*cities\.csv \(a link to .*folder\.csv\) to be a regular file/,
    ],
    [
      'a .bak that is a directory',
      async (dir: string) => {
        await copyFile(join(KIT, 'cities11.csv'), join(dir, 'cities.csv'));
        await mkdir(join(dir, 'cities.csv.bak'));
      },
      /cities\.csv\.bak is a directory/,
    ],
  ])('%s: refused at start with a clear message', async (name, setup, message) => {
    const dir = join(root, `refused-${name.replaceAll(' ', '-')}`);
    await mkdir(dir);
    await setup(dir);
    await expect(
      serve({ dir: join(dir, 'site'), data: join(dir, 'cities.csv'), port: 0, writable: true, token: TOKEN }),
    ).rejects.toThrow(message);
  });
});

describe('the token is checked at start', () => {
  it('a token no client could send is refused', async () => {
    await expect(
      serve({ dir: join(root, 'site-bad-token'), data: datasets.csv, port: 0, writable: true, token: 'two words' }),
    ).rejects.toThrow(/^`token` contains " " \(U\+0020\)/);
  });

  it('a non-ASCII token is warned about, and matches a client that sends its UTF-8 bytes (as DRF reads them)', async () => {
    const dir = join(root, 'non-ascii-token');
    await mkdir(dir);
    const data = join(dir, 'cities.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const logs: string[] = [];
    const server = await serve({
      dir: join(dir, 'site'),
      data,
      port: 0,
      writable: true,
      token: 'clé-字',
      collation: 'codepoint',
      orderings: ['default'],
      pageSizes: [10],
      log: (l) => logs.push(l),
    });
    try {
      expect(logs.some((l) => l.startsWith('warning: `token` is not ASCII'))).toBe(true);
      // Header bytes as latin-1 text, the body a Buffer: node then sends the header bytes as they are.
      const as = (key: Buffer) =>
        rawRequest(server.apiUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Token ${key.toString('latin1')}` },
          body: Buffer.from(JSON.stringify(names('Key'))),
        });
      expect((await as(Buffer.from('clé-字', 'utf8'))).status).toBe(201);
      expect(json((await as(Buffer.from('clé', 'latin1'))).body)).toEqual({
        detail: 'Invalid token header. Token string should not contain invalid characters.',
      });
    } finally {
      await server.close();
    }
  });
});
