import { spawn, type ChildProcess } from 'node:child_process';
import cluster from 'node:cluster';
import { lstatSync } from 'node:fs';
import { copyFile, lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningServer, ServeOptions } from '../src/app/serve.js';
import type { City } from '../src/core/fields.js';
import { ServerPool, type ServerProtocol } from '../src/app/server-pool.js';
import { readDataset } from '../src/dataset/read-dataset.js';
import { Channel } from '../src/proc/channel.js';
import type { WorkerChannel } from '../src/proc/workers.js';
import { BEHIND_PATH } from '../src/site/behind.js';
import { caughtUp, sleep } from './crash-helpers.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { rawRequest, smallWritable } from './serve-helpers.js';

// serve --writable --workers 2, a worker killed: its replacement answers every acknowledged city
// from its first request, whether the site's files hold them (the primary keeps none of those) or
// not yet, and whether the catch-up build folds them in before, while or after it opens the site.

const TOKEN = 'replace-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
const holders: ChildProcess[] = [];
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-replacement-')));
afterEach(() => void vi.restoreAllMocks());
afterAll(async () => {
  for (const holder of holders) holder.kill();
  await cleanup();
});

async function writableWorkers(name: string, more: Partial<ServeOptions> = {}) {
  const dir = join(root, name);
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  await copyFile(join(KIT, 'cities11.csv'), data);
  const server = await smallWritable(join(dir, 'site'), data, TOKEN, { workers: 2, ...more });
  return { dir, data, server };
}

/** POSTs a city named `name`; answers the status. */
async function post(server: RunningServer, name: string): Promise<number> {
  const res = await rawRequest(server.apiUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}` },
    body: JSON.stringify({ ...makeCity(0, { name }), id: undefined }),
  });
  return res.status;
}

/** POSTs a city named `name`; expects it acknowledged. */
async function create(server: RunningServer, name: string): Promise<void> {
  expect(await post(server, name)).toBe(201);
}

/** Of `names`, those missing from each of 8 answers through fresh connections (node:cluster hands them to the workers in turn). */
async function missing(server: RunningServer, names: readonly string[]): Promise<string[][]> {
  const seen: string[][] = [];
  for (let i = 0; i < 8; i++) {
    const res = await rawRequest(`${server.apiUrl}?page_size=100&n=${i}`, { fresh: true });
    const results = (JSON.parse(res.body.toString()) as { results: City[] }).results;
    seen.push(names.filter((name) => !results.some((city) => city.name_en === name)));
  }
  return seen;
}
type ServerWorker = WorkerChannel<ServerProtocol>;
const NONE_MISSING = Array.from({ length: 8 }, () => []);

/** Kills one worker; resolves once the primary has asked its replacement to open the site, with the answer to come. */
async function killWorker(calls: { mock: { calls: unknown[][]; results: { value: unknown }[] } }) {
  process.kill(Object.values(cluster.workers!)[0]!.process.pid!, 'SIGKILL');
  for (;;) {
    const index = calls.mock.calls.findIndex(([name]) => name === 'open');
    if (index >= 0) return { opened: calls.mock.results[index]!.value as Promise<unknown> };
    await sleep(10);
  }
}

/**
 * Kills one worker; its replacement's `open` is answered to the primary only once `hear()` is
 * called (until then it is not among the workers a build waits for). Resolves once it answers requests.
 */
async function killHeardLate() {
  let hear!: () => void;
  const hearing = new Promise<void>((resolve) => (hear = resolve));
  const call = Channel.prototype.call;
  let answered: Promise<unknown> | undefined;
  const calls = vi.spyOn(Channel.prototype, 'call').mockImplementation(function (this: unknown, ...args) {
    const answer = call.apply(this, args as Parameters<typeof call>);
    if (args[0] !== 'open' || answered) return answer;
    answered = answer;
    return answer.then((value) => hearing.then(() => value));
  });
  const { opened } = await killWorker(calls);
  await answered;
  return { calls, opened, hear };
}

describe('serve --writable --workers 2: a worker replacing one that died', () => {
  it('after the catch-up: it is sent none of the cities the files hold (the primary keeps none), and answers every one', async () => {
    const { dir, data, server } = await writableWorkers('after');
    try {
      const names = ['Built 0', 'Built 1', 'Built 2', 'Built 3', 'Built 4'];
      for (const name of names) await create(server, name);
      await caughtUp(data);
      // The marker goes once the writer holds no city unbuilt.
      while (await lstat(join(dir, 'site', BEHIND_PATH)).catch(() => null)) await sleep(20);
      const calls = vi.spyOn(Channel.prototype, 'call');
      await (await killWorker(calls)).opened;
      expect(await missing(server, names)).toEqual(NONE_MISSING);
      const sent = calls.mock.calls.filter(([name]) => name === 'add').flatMap(([, cities]) => cities as City[]);
      expect(sent.map((city) => city.name_en)).toEqual([]);
      await create(server, 'After');
      expect(await missing(server, [...names, 'After'])).toEqual(NONE_MISSING);
    } finally {
      await server.close();
    }
  });

  it('before and while the catch-up: the primary hears late that it is open; it answers every city acknowledged, unbuilt, folded in meanwhile, or after', async () => {
    const { dir, data, server } = await writableWorkers('during');
    try {
      // Another build holds the site's lock: the catch-up waits, the cities stay unbuilt.
      const holder = holders[holders.push(spawn('sleep', ['600'])) - 1]!;
      await writeFile(join(dir, '.site.lock'), `${holder.pid}\n`);
      const names = ['Unbuilt 0', 'Unbuilt 1', 'Unbuilt 2'];
      for (const name of names) await create(server, name);
      const { opened, hear } = await killHeardLate();
      expect(await missing(server, names)).toEqual(NONE_MISSING);
      for (const name of ['Meanwhile 0', 'Meanwhile 1']) {
        await create(server, name);
        names.push(name);
        expect(await missing(server, names)).toEqual(NONE_MISSING);
      }
      await rm(join(dir, '.site.lock'));
      await caughtUp(data);
      expect(await missing(server, names)).toEqual(NONE_MISSING);
      hear();
      await opened;
      expect(await missing(server, names)).toEqual(NONE_MISSING);
      await create(server, 'After');
      expect(await missing(server, [...names, 'After'])).toEqual(NONE_MISSING);
    } finally {
      await server.close();
    }
  });

  it('one that dies before the primary hears it is open is let go: builds wait for the workers alive only', async () => {
    const { data, server } = await writableWorkers('died-opening');
    try {
      const { calls, opened, hear } = await killHeardLate();
      const opens = () => calls.mock.calls.flatMap(([name], i) => (name === 'open' ? [i] : []));
      const dying = calls.mock.contexts[opens()[0]!] as ServerWorker;
      await dying.stop('SIGKILL');
      while (opens().length < 2) await sleep(10);
      // Its replacement is open; then the primary hears that the one killed was.
      await calls.mock.results[opens()[1]!]!.value;
      hear();
      await opened;
      calls.mockClear();
      await create(server, 'Built');
      await caughtUp(data);
      const replaced = new Set(calls.mock.contexts.filter((_, i) => calls.mock.calls[i]![0] === 'replace'));
      expect(replaced.size).toBe(2);
      expect(replaced.has(dying)).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('serve --writable --workers 2 closing while its files lack acknowledged cities (the catch-up could not build): the writer folds them into the dataset, not into the files', () => {
  it('until the workers stop, a replacement answers them and a refused POST leaves the site marked behind; the next start keeps the marker until its first build holds them', async () => {
    const { dir, data, server } = await writableWorkers('closing', { lockWait: 300 });
    const site = join(dir, 'site');
    const marked = async () => !!(await lstat(join(site, BEHIND_PATH)).catch(() => null));
    const inFiles = async (names: readonly string[]) => {
      const text = await readFile(join(site, '_cities-api', 'cities.json'), 'utf8');
      return names.filter((name) => text.includes(`"${name}"`));
    };
    const inDataset = async (names: readonly string[]) => {
      const cities = (await readDataset(data)).toCities();
      return names.filter((name) => cities.some((city) => city.name_en === name));
    };
    // Another build holds the site's lock: every catch-up fails, the cities stay unbuilt.
    const holder = holders[holders.push(spawn('sleep', ['600'])) - 1]!;
    await writeFile(join(dir, '.site.lock'), `${holder.pid}\n`);
    const names = ['Unbuilt 0', 'Unbuilt 1'];
    for (const name of names) await create(server, name);
    // Between the writer's close (the fold) and the workers': a worker dies, a POST is refused.
    const closing: Record<string, unknown> = {};
    const close = ServerPool.prototype.close;
    vi.spyOn(ServerPool.prototype, 'close').mockImplementationOnce(async function (this: ServerPool) {
      try {
        closing.folded = await inDataset(names);
        await (await killWorker(vi.spyOn(Channel.prototype, 'call'))).opened;
        closing.missing = await missing(server, names);
        // Another process holds the dataset's lock past the wait: refused whole.
        await writeFile(join(dir, '.cities.csv.lock'), `${holder.pid}\n`);
        closing.refused = await post(server, 'Refused');
        await sleep(200);
        closing.marked = await marked();
      } finally {
        await close.call(this);
      }
    });
    await server.close();
    expect(closing).toEqual({ folded: names, missing: NONE_MISSING, refused: 503, marked: true });
    expect({ marked: await marked(), inFiles: await inFiles(names) }).toEqual({ marked: true, inFiles: [] });
    await rm(join(dir, '.site.lock'));
    await rm(join(dir, '.cities.csv.lock'));
    let markedAtBuild: boolean | undefined;
    const next = await smallWritable(site, data, TOKEN, {
      firstBuild: {
        onStart: () => void (markedAtBuild = !!lstatSync(join(site, BEHIND_PATH), { throwIfNoEntry: false })),
      },
    });
    try {
      expect({
        markedAtBuild,
        marked: await marked(),
        inFiles: await inFiles(names),
        missing: await missing(next, names),
      }).toEqual({ markedAtBuild: true, marked: false, inFiles: names, missing: NONE_MISSING });
    } finally {
      await next.close();
    }
  });
});
