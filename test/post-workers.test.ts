import { readFileSync } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAME_FIELDS } from '../src/core/fields.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { caughtUp, killStragglers } from './crash-helpers.js';
import { KIT, tempDir } from './helpers.js';
import { rawRequest, startCli } from './serve-helpers.js';

// serve --writable --workers N: a POST is acknowledged once logged and answered by every worker,
// so the very next GET, whichever worker takes it and whatever its query, includes the city.

const TOKEN = 'workers-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-post-workers-')));
afterAll(async () => {
  await killStragglers();
  await cleanup();
});

const names = (name: string) => Object.fromEntries(NAME_FIELDS.map((f) => [f, name]));
const post = (url: string, name: string) =>
  rawRequest(`${url}/cities/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` },
    body: JSON.stringify(names(name)),
  });
const body = (res: { body: Buffer }) => JSON.parse(res.body.toString()) as Record<string, unknown>;

async function writableCli(name: string, workers: number) {
  const data = join(root, `${name}.csv`);
  await copyFile(join(KIT, 'cities11.csv'), data);
  const server = await startCli(
    [
      join(root, `${name}-site`),
      '--data',
      data,
      '--port',
      '0',
      '--writable',
      '--workers',
      String(workers),
      '--collation',
      'codepoint',
      // One ordering and page size in files: the rest is live, and each catch-up build is a few files.
      '--orderings',
      'default',
      '--page-sizes',
      '10',
      '--quiet',
    ],
    { CITIES_API_TOKEN: TOKEN },
  );
  return { data, ...server };
}

// One server per worker count, shared by its cases (each starts from the count it finds).
describe.each([1, 2])('serve --writable --workers %d', (workers) => {
  let server: Awaited<ReturnType<typeof writableCli>>;
  beforeAll(async () => {
    server = await writableCli(`writable-${workers}`, workers);
  }, 120_000);
  afterAll(() => server?.stop());
  /** The dataset once every logged city is folded into it. */
  const settled = async () => {
    await caughtUp(server.data);
    return readDataset(server.data);
  };

  it('100 parallel POSTs: 100 new cities with distinct ids, answered at once by every worker; the file catches up', async () => {
    const before = await settled();
    const next = Math.max(...before.ids) + 1;
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => post(server.url, `Parallel ${i}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(201));
    const ids = answers.map((a) => body(a).id as number);
    expect(new Set(ids).size).toBe(100);
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => next + i));
    // New connections each: node:cluster hands them to the workers in turn.
    for (let i = 0; i < 4 * workers; i++)
      expect(body(await rawRequest(`${server.url}/cities/?page=${1 + i}`)).count).toBe(before.count + 100);
    expect((await settled()).count).toBe(before.count + 100);
  }, 120_000);

  it('each POST is in the very next GET, on any worker and for any query (files, live orderings, other page sizes)', async () => {
    const start = (await settled()).count;
    const targets = ['/cities/', '/cities/?ordering=-name_en', '/cities/?page_size=7&page=2', '/cities/?page=last'];
    for (let i = 0; i < 6; i++) {
      const created = body(await post(server.url, `Next ${i}`));
      for (const target of targets) {
        const listing = body(await rawRequest(`${server.url}${target}`));
        expect(listing.count, `${target} after POST ${i}`).toBe(start + 1 + i);
      }
      const all = body(await rawRequest(`${server.url}/cities/?page_size=1000&ordering=name_en`));
      expect((all.results as { id: number }[]).map((c) => c.id)).toContain(created.id);
    }
  }, 120_000);

  it('a POST against a dataset made invalid on disk: 500 with a JSON detail, one log line naming the file, no stack trace', async () => {
    await settled();
    const good = await readFile(server.data);
    await writeFile(server.data, `${good}not,a,row\n`);
    const failed = await post(server.url, 'Lost');
    expect([failed.status, failed.headers['content-type'], body(failed)]).toEqual([
      500,
      'application/json',
      { detail: 'A server error occurred.' },
    ]);
    expect(server.output()).toMatch(/POST failed \(500\): invalid dataset .*writable-\d\.csv/);
    expect(server.output()).not.toMatch(/\n\s+at /);
    await writeFile(server.data, good);
    expect((await post(server.url, 'Repaired')).status).toBe(201);
  }, 60_000);
});

describe('serve --writable --workers 2, a worker killed', () => {
  it('POSTs while its replacement starts: none answered 500 (each was logged, then failed to reach the worker not yet open); every city in the file was answered 201', async () => {
    const server = await writableCli('worker-killed', 2);
    try {
      const [victim] = readFileSync(`/proc/${server.child.pid}/task/${server.child.pid}/children`, 'utf8')
        .split(' ')
        .filter(Boolean);
      process.kill(Number(victim), 'SIGKILL');
      for (let t = 0; t < 200 && !/starting another/.test(server.output()); t++)
        await new Promise((r) => setTimeout(r, 10));
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(server.url, `Meanwhile ${i}`)));
      expect(answers.filter((a) => a.status === 500).map((a) => body(a))).toEqual([]);
      await caughtUp(server.data);
      const created = answers.filter((a) => a.status === 201).map((a) => body(a).name_en);
      const inFile = (await readDataset(server.data)).toCities().map((c) => c.name_en);
      expect(inFile.filter((name) => name.startsWith('Meanwhile')).sort()).toEqual(created.sort());
    } finally {
      await server.stop();
    }
  }, 120_000);
});
