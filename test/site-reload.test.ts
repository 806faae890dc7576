import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, utimes } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveSite } from '../src/app/live-site.js';
import { buildHere } from '../src/app/build.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { indexOf, readSiteData } from '../src/http/site-data.js';
import { composeInThread, holdComposing } from '../src/http/compose-thread.js';
import { parseOrdering } from '../src/core/ordering.js';
import { Orders, type OrderSource } from '../src/core/orders.js';
import { readSiteDataInThread, threadReader } from '../src/http/site-data-thread.js';
import { runningThreads } from '../src/proc/workers.js';
import type { ReadSite } from '../src/http/site-state.js';
import { assembleStored, cityStorage } from '../src/core/page-assembly.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { MANIFEST_PATH } from '../src/site/manifest.js';
import { loadSite, type LoadedSite } from '../src/http/site-state.js';
import type { WasmMemory } from '../src/http/page-memory.js';
import { KIT, tempDir } from './helpers.js';

// Issue #26 item 2: a served site is loaded (dataset parsed, fields ranked) in a thread while the
// old one answers; the new one is answered only once complete, a failed load leaves the old one
// answering, and loads run one at a time (an older build never replaces a newer one).

let dir: string;
let cleanup: () => Promise<void>;
const site = () => join(dir, 'site');
/** Builds the site from a kit dataset (cities11, cities48, prefixed30, cities1234): its count of cities tells which build answers. */
const buildFrom = (name: string, out = site()) =>
  buildHere({ data: join(KIT, `${name}.json`), out, baseUrl: 'http://x.test', pageSizes: [10] });
/** The 1234-city kit's site, built once for the cases that only read it (each of them built it again into site()). */
let built1234: Promise<string> | undefined;
const site1234 = () => (built1234 ??= buildFrom('cities1234', join(dir, 'site1234')).then(() => join(dir, 'site1234')));
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(() => cleanup());

/** A ReadSite whose reads started while `held` give their data only after release(), and fail while `failing` is set (each read counted). */
function gatedRead() {
  const gate = { reads: 0, failing: false, held: false };
  // A promise, not a list of waiters: a read that reaches the gate after release() (a loaded machine) passes too.
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const read: ReadSite = async (root, collation) => {
    gate.reads++;
    const held = gate.held;
    if (gate.failing) throw new Error('read failed once');
    const data = await readSiteData(root, collation);
    if (held) await released;
    return data;
  };
  return { gate, read, release };
}
const count = (live: LiveSite) => live.current.context.index.count;
const tick = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('LiveSite.reload', () => {
  it.each([
    [
      'the old site answers until the new one is complete',
      async (live: LiveSite, { gate, release }: ReturnType<typeof gatedRead>) => {
        await buildFrom('cities48');
        gate.held = true;
        const reloading = live.reload();
        await tick();
        const during = count(live);
        release();
        await reloading;
        return [during, count(live)];
      },
      [11, 48],
    ],
    [
      'a failed load leaves the old site answering, and the next reload loads the new one',
      async (live: LiveSite, { gate }: ReturnType<typeof gatedRead>) => {
        await buildFrom('cities48');
        gate.failing = true;
        const failed = await live.reload().then(
          () => 'loaded',
          (error: Error) => error.message,
        );
        const after = count(live);
        gate.failing = false;
        await live.reload();
        return [failed, after, count(live)];
      },
      ['read failed once', 11, 48],
    ],
    [
      'loads run one at a time: a slow load of an older build never replaces a newer one',
      async (live: LiveSite, { gate, release }: ReturnType<typeof gatedRead>) => {
        await buildFrom('cities48');
        gate.held = true;
        const older = live.reload();
        await tick();
        gate.held = false;
        await buildFrom('prefixed30');
        const newer = live.reload();
        await tick();
        release();
        await Promise.all([older, newer]);
        return [count(live), gate.reads];
      },
      [30, 3],
    ],
  ])('%s', async (_, steps, expected) => {
    await buildFrom('cities11');
    const gated = gatedRead();
    const live = await LiveSite.open(site(), gated.read);
    try {
      expect(await steps(live, gated)).toEqual(expected);
    } finally {
      await live.close();
    }
  });
});

describe('LiveSite.open', () => {
  it.each([
    ['a directory that does not exist', 'missing'],
    ['an empty directory', 'empty'],
  ])('of %s: the clear error, naming the site', async (_, name) => {
    const where = join(dir, name);
    if (name === 'empty') await mkdir(where);
    await expect(LiveSite.open(where)).rejects.toThrow(`${where} holds no cities-api site`);
  });
});

describe('LiveSite reloads: the WebAssembly memories datasets are read into', () => {
  // Only a full collection frees a WebAssembly memory, and nothing prompts one: a new memory per
  // reload piled up for good (a 20k site reloaded 150 times: 1.5 GB of RSS). A replaced site's is
  // read into by a later load, once no answer reads it; never while one does.
  const QUERIES = ['page_size=7&page=3', 'ordering=-name_en&page_size=10&page=40', 'page_size=450&page=2'];
  /** The pages of QUERIES from `loaded`, copied (nothing lent). */
  const pagesOf = (loaded: LoadedSite) =>
    QUERIES.map((q) =>
      Buffer.from(bodyBytes(answerListing(loaded.context.index, parseQuery(q), loaded.context.spec.baseUrl).body)),
    );
  /** A LiveSite of the 1234-city kit's site read in threads, as serve's, each read's memory listed (undefined: none). */
  async function reloading() {
    const root = await site1234();
    const memories: (WasmMemory | undefined)[] = [];
    const read: ReadSite = async (at, collation, into) => {
      const data = await readSiteDataInThread(at, collation, into);
      memories.push(data.memory);
      return data;
    };
    const live = await LiveSite.open(root, read);
    let touched = 0;
    /** The manifest touched (another build, as the server sees it), the site reloaded. */
    const reload = async () => {
      const when = new Date(Date.now() + ++touched * 1000);
      await utimes(join(root, MANIFEST_PATH), when, when);
      await live.reload();
    };
    /** A response still being sent (a slow client), until close. */
    const response = () =>
      Object.assign(new EventEmitter(), { writableFinished: false, closed: false }) as unknown as ServerResponse;
    return { live, memories, reload, response, expected: pagesOf(await loadSite(root)) };
  }

  it.each([
    [
      'six reloads in a row, no answer holding a site: each load in a WebAssembly memory, two memories in all, the pages right',
      async ({ live, memories, reload, expected }: Awaited<ReturnType<typeof reloading>>) => {
        for (let i = 0; i < 6; i++) {
          await reload();
          expect(pagesOf(live.current)).toEqual(expected);
        }
        expect(memories.length).toBe(7);
        expect(memories.filter((memory) => !memory)).toEqual([]);
        expect(new Set(memories).size).toBe(2);
      },
    ],
    [
      'a site an answer still reads (a slow client) across reloads: no load reads into its memory until the answer is over, its pages its own meanwhile',
      async ({ live, memories, reload, response, expected }: Awaited<ReturnType<typeof reloading>>) => {
        const held = live.current;
        const res = response();
        held.lease!.hold(res);
        for (let i = 0; i < 4; i++) await reload();
        expect(memories.slice(1)).not.toContain(memories[0]);
        expect(pagesOf(held)).toEqual(expected);
        expect(new Set(memories).size).toBe(3);
        res.emit('close');
        await reload();
        await reload();
        expect(memories.slice(5)).toContain(memories[0]);
        expect(pagesOf(live.current)).toEqual(expected);
      },
    ],
    [
      'an answer computed later (a multi-field order composed first) holds its site until it is done, then until it is sent',
      async ({ live, memories, reload, response }: Awaited<ReturnType<typeof reloading>>) => {
        const res = response();
        let compute = () => {};
        live.current.lease!.hold(res, new Promise<void>((resolve) => (compute = resolve)));
        await reload();
        await reload();
        expect(memories.slice(1)).not.toContain(memories[0]);
        compute();
        await tick();
        await reload();
        expect(memories.slice(3)).not.toContain(memories[0]);
        res.emit('close');
        await reload();
        await reload();
        expect(memories.slice(4)).toContain(memories[0]);
      },
    ],
  ])('%s', async (_, steps) => {
    const reloads = await reloading();
    try {
      await steps(reloads);
    } finally {
      await reloads.live.close();
    }
  });
});

describe('readSiteDataInThread', () => {
  /** Each part of the data by its path: a typed array as its kind and a digest of its bytes (a Buffer as a Uint8Array). */
  function plain(value: unknown, path = '', out: Record<string, string> = {}): Record<string, string> {
    if (ArrayBuffer.isView(value)) {
      const view = value as Uint8Array;
      const kind = Buffer.isBuffer(view) ? 'Uint8Array' : view.constructor.name;
      const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      out[path] = `${kind} ${createHash('sha256').update(bytes).digest('hex')}`;
    } else if (value && typeof value === 'object')
      for (const [key, each] of Object.entries(value)) plain(each, `${path}/${key}`, out);
    else out[path] = JSON.stringify(value);
    return out;
  }

  it("reads what readSiteData reads in this thread, every part in shared memory (none counted as this thread's external memory)", async () => {
    const site = await site1234();
    const [here, there] = await Promise.all([readSiteData(site, 'locale'), readSiteDataInThread(site, 'locale')]);
    expect(plain(there)).toEqual(plain(here));
    expect(Object.keys(there.ranks)).toEqual([...NAME_FIELDS]);
    const views = [
      there.table.ids,
      there.table.top,
      there.table.spans,
      ...there.table.chunks,
      ...Object.values(there.ranks).map((r) => r.ranks),
      ...Object.values(there.singles),
    ];
    expect(views.filter((view) => !(view.buffer instanceof SharedArrayBuffer))).toEqual([]);
  });

  it('its data holds the dataset in a WebAssembly memory, where this thread assembles pages: the bytes JavaScript copies', async () => {
    const site = await site1234();
    const there = indexOf(await readSiteDataInThread(site, 'locale'), 'locale');
    const { chunks, spans, joined, memory } = there.storage;
    expect(memory?.chunks).toBe(chunks.length);
    const copied = cityStorage(chunks, spans, joined);
    const head = '{"results":[';
    for (const positions of [
      [0, 1, 2, 3, 4, 5, 6],
      [1233, 7, 600, 601, 3],
    ]) {
      const page = Uint32Array.from(positions);
      expect(Buffer.from(assembleStored(head, page, there.storage))).toEqual(
        Buffer.from(assembleStored(head, page, copied)),
      );
    }
  });

  it.each([['a directory that holds no site', (d: string) => join(d, 'nothing-here')]])(
    'fails for %s, and its thread ends',
    async (_, root) => {
      await expect(readSiteDataInThread(root(dir), 'locale')).rejects.toThrow(/ENOENT|no such file/);
    },
  );
});

describe('a reading thread started as a build begins, not at the read after it', () => {
  /** This process's threads at nice 19 (Linux: /proc), as the reading thread lowers itself. */
  function lowest(): Set<string> {
    const tids = readdirSync('/proc/self/task').filter((tid) => {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16] === '19';
      } catch {
        return false; // ended meanwhile
      }
    });
    return new Set(tids);
  }
  /** The threads at nice 19 not among `before`, once there is one (a thread's start takes ~25 ms of CPU), and 200 ms later. */
  async function newLowest(before: Set<string>): Promise<string[]> {
    const fresh = () => [...lowest()].filter((tid) => !before.has(tid));
    for (let waited = 0; waited < 10_000 && !fresh().length; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    return fresh();
  }

  /**
   * Each scenario calls `ahead()` just before what starts the thread, then `between()` once it is
   * started and before the read; it returns what closes what it opened, called once checked.
   */
  type Scenario = (ahead: () => void, between: () => Promise<void>) => Promise<(() => Promise<void>) | undefined>;
  it.runIf(process.platform === 'linux').each<[string, Scenario]>([
    [
      "a ThreadReader's prepare(), then a read",
      async (ahead, between) => {
        const reader = threadReader();
        ahead();
        reader.prepare();
        await between();
        await reader(await site1234(), 'locale');
        return reader.close;
      },
    ],
    [
      'LiveSite.replace(): started before the build runs, the site read after it',
      async (ahead, between) => {
        const live = await LiveSite.open(await site1234());
        try {
          ahead();
          await live.replace(async () => {
            await between();
            // The build: the manifest touched, so that the site is read again after it.
            const now = new Date(Date.now() + 5000);
            await utimes(join(await site1234(), MANIFEST_PATH), now, now);
          });
        } catch (error) {
          await live.close();
          throw error;
        }
        // Closed once checked: its composing thread, which may have lowered itself after ahead(), ends with it.
        return () => live.close();
      },
    ],
  ])('%s: the thread waits at nice 19 before the read, and ends with it', async (_, scenario) => {
    let before = new Set<string>();
    let started: string[] = [];
    const close = await scenario(
      () => void (before = lowest()),
      async () => void (started = await newLowest(before)),
    );
    try {
      // Another may have started meanwhile (LiveSite's composing thread, until it closes): the reader is one that ended.
      expect(started.filter((tid) => !lowest().has(tid))).toHaveLength(1);
    } finally {
      await close?.();
    }
  });
});

describe('composeInThread', () => {
  // As a served site's LiveSite holds the thread, for the cases of a held one.
  let letGo = async () => {};
  beforeAll(() => void (letGo = holdComposing()));
  afterAll(() => letGo());

  /** Each field's ranks and one-field orders of the 1234-city kit, in shared memory (as served) or not. */
  async function source(sharedMemory: boolean): Promise<OrderSource> {
    const data = await readSiteData(await site1234(), 'locale');
    const index = indexOf(data, 'locale');
    if (sharedMemory) return index;
    const copy = <T extends Uint32Array | Uint8Array>(view: T) => view.slice() as T;
    return {
      count: index.count,
      distinct: (field) => index.distinct(field),
      ranks: (field) => ({ ...index.ranks(field), ranks: copy(index.ranks(field).ranks) }),
      single: (ordering) => copy(index.single(ordering)),
    };
  }

  it.each([
    ['two fields', 'name_fr,-name_de'],
    ['four fields, descending first', '-name_ar,name_en,-name_ru,name_it'],
  ])('composes %s in its thread: the order composed in steps here', async (_, text) => {
    const ordering = parseOrdering(text);
    const from = await source(true);
    const steps = new Orders(from, 0).order(ordering);
    const there = await composeInThread(new Orders(from, 0).decisive(ordering), from);
    expect(Buffer.from(there.buffer, there.byteOffset, there.byteLength)).toEqual(
      Buffer.from(steps.buffer, steps.byteOffset, steps.byteLength),
    );
  });

  it('refuses a source outside shared memory (sending it would copy it); Orders then composes it in steps', async () => {
    const from = await source(false);
    const ordering = parseOrdering('name_fr,-name_de');
    await expect(composeInThread(ordering, from)).rejects.toThrow(/shared memory/);
    let pauses = 0;
    const order = await new Orders(from, 0, composeInThread).compose(ordering, async () => void pauses++);
    expect(order).toEqual(new Orders(from, 0).order(ordering));
    expect(pauses).toBeGreaterThan(0);
  });

  it('refuses while no server holds the thread (one closing): Orders then composes it in steps, starting no thread', async () => {
    const from = await source(true);
    const ordering = parseOrdering('name_fr,-name_de');
    await letGo();
    try {
      const before = runningThreads();
      await expect(composeInThread(ordering, from)).rejects.toThrow(/while a server holds it/);
      const order = await new Orders(from, 0, composeInThread).compose(ordering, async () => {});
      expect(order).toEqual(new Orders(from, 0).order(ordering));
      expect(runningThreads()).toBe(before);
    } finally {
      letGo = holdComposing();
    }
  });
});
