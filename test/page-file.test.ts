import { afterEach, describe, expect, it, vi } from 'vitest';
import { CityIndex } from '../src/core/city-index.js';
import { CityTable } from '../src/core/city-table.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { answerListing, bodyBytes } from '../src/core/page.js';
import { parseQuery } from '../src/core/query-string.js';
import { PAGE_FILE_MS } from '../src/http/page-file.js';
import { denoServer, type DenoFile, type DenoFiles } from '../src/platforms/deno/adapter.js';
import { siteSpec, type SiteSettings } from '../src/site/spec.js';
import { staticPathFor } from '../src/site/layout.js';
import { memoryEdgeSite } from './edge-helpers.js';
import { makeCity } from './helpers.js';

// Deno's server answers a covered query with its page file's stream (http/page-file.ts,
// platforms/deno/page-files.ts) over a Deno namespace in memory: the same status, headers and bytes
// as the page computed from the edge files, no block read; and every file it cannot send as the
// build's own (a link, another build's, one that fails) is closed, the page computed instead.

const BASE = 'http://api.example.com';
const SETTINGS: SiteSettings = {
  baseUrl: BASE,
  collation: 'codepoint',
  pageSizes: [10, 20],
  orderings: [...PRECOMPUTABLE_ORDERINGS],
  defaultPageSize: 10,
  compression: 'none',
  liveUrl: null,
};
const indexOf = (n: number, name = (i: number) => `N${i % 7}é`) =>
  new CityIndex(
    CityTable.fromCities(Array.from({ length: n }, (_, i) => makeCity(i + 1, { name: name(i) }))),
    'codepoint',
  );
const INDEX = indexOf(23);
const TAG = '00112233445566ff';

/** A build's files: its edge data, and each covered page's file holding the page computed for its query. */
function build(index: CityIndex, tag: string, settings = SETTINGS, queries = COVERED) {
  const files = new Map(memoryEdgeSite(index, tag).files);
  const spec = siteSpec(settings, index.count);
  for (const query of queries) {
    const path = staticPathFor(parseQuery(query), spec)!;
    files.set(path, new Uint8Array(bodyBytes(answerListing(index, parseQuery(query), settings.baseUrl).body)));
  }
  return files;
}

const COVERED = ['', 'page=2', 'page=last', 'page_size=20&page=2', 'ordering=-name_en&page=3', 'page_size=1000'];

/** What a case does to the namespace: links, a directory reached through a link, failures, a rebuild once a page is open. */
interface Twist {
  links?: Record<string, string>;
  linkedDir?: string;
  replacedAfterOpen?: string;
  failing?: 'open' | 'read' | 'lstat';
  /** A page's open that waits for this (a FIFO), or its reads that never answer. */
  hanging?: { open?: Promise<void>; read?: true };
  onPageOpen?: (deno: MemoryDeno) => void;
  noLstat?: boolean;
  noReadable?: boolean;
  otherDevice?: string;
}

type MemoryDeno = ReturnType<typeof memoryDeno>;

/** Deno's namespace over files in memory (the site at /site/), counting opens, closes and reads of blocks. */
function memoryDeno(start: Map<string, Uint8Array>, twist: Twist = {}) {
  const state = {
    files: start,
    version: 1,
    opened: [] as string[],
    closed: [] as string[],
    blocks: 0,
    // Where the site's directory really is, and the paths realPath was asked.
    root: '/site',
    realPaths: [] as string[],
  };
  const pathOf = (url: URL) => decodeURIComponent(url.pathname).replace(/^\/site\//, '');
  const ino = (path: string) => [...state.files.keys()].indexOf(path) + 100 * state.version;
  const bytesOf = (path: string) => {
    const bytes = state.files.get(twist.links?.[path] ?? path);
    if (!bytes) throw Object.assign(new Error(`no ${path}`), { code: 'NotFound' });
    return bytes;
  };
  const deno = {
    state,
    /** A new build; `root`: the site's directory now a link to there. */
    rebuild(files: Map<string, Uint8Array>, root = state.root) {
      state.files = files;
      state.version++;
      state.root = root;
    },
    readFile: async (url: URL) => bytesOf(pathOf(url)),
    stat: async (url: URL) => ({ ino: state.version, mtime: new Date(0), size: bytesOf(pathOf(url)).length }),
    open: async (url: URL): Promise<DenoFile> => {
      const path = pathOf(url);
      if (path.startsWith('_cities-api/edge/rows')) state.blocks++;
      const page = path.startsWith('cities/');
      if (page && twist.hanging?.open) await twist.hanging.open;
      if (page && twist.failing === 'open') throw Object.assign(new Error('denied'), { code: 'PermissionDenied' });
      // A rebuild just before the open: the path is the new build's file.
      if (page) twist.onPageOpen?.(deno);
      const bytes = bytesOf(path);
      const own = ino(twist.links?.[path] ?? path);
      if (page) state.opened.push(path);
      let at = 0;
      let closed = false;
      const close = () => {
        if (closed) throw new Error('closed twice');
        [closed] = [true, page && state.closed.push(path)];
      };
      const file: DenoFile = {
        read: async (into) => {
          if (twist.failing === 'read' && page) throw new Error('EIO');
          if (twist.hanging?.read && page) return new Promise<null>(() => undefined);
          const n = Math.min(into.length, bytes.length - at);
          into.set(bytes.subarray(at, at + n));
          at += n;
          return n || null;
        },
        seek: async (offset) => (at = offset),
        stat: async () => ({ size: bytes.length, ino: own, dev: 1 }),
        close,
      };
      // As Deno's: the file's bytes from where it is (made when asked for), the file closed at their end or once cancelled.
      if (!twist.noReadable) Object.defineProperty(file, 'readable', { get: stream });
      return file;
      function stream() {
        return new ReadableStream<Uint8Array>(
          {
            pull(controller) {
              if (at < bytes.length) return controller.enqueue(bytes.slice(at, (at += 7)));
              controller.close();
              close();
            },
            cancel: close,
          },
          { highWaterMark: 0 },
        );
      }
    },
    lstat: async (url: URL) => {
      const path = pathOf(url);
      if (twist.failing === 'lstat') throw new Error('EIO');
      bytesOf(path);
      // A link's own inode.
      const own = path in (twist.links ?? {}) ? 50_000 : ino(path);
      return {
        size: 0,
        ino: path === twist.replacedAfterOpen ? 99_999 : own,
        dev: path === twist.otherDevice ? 2 : 1,
      };
    },
    realPath: async (url: URL) => {
      const path = pathOf(url).replace(/\/$/, '');
      state.realPaths.push(path);
      return twist.linkedDir && path.startsWith(twist.linkedDir)
        ? `/elsewhere/${path}`
        : `${state.root}${path ? `/${path}` : ''}`;
    },
  };
  if (twist.noLstat) return { ...deno, lstat: undefined, realPath: undefined };
  return deno;
}

async function answer(deno: DenoFiles, query: string, init: RequestInit = {}, server = serverOf(deno)) {
  const response = await server.fetch(new Request(`${BASE}/cities/?${query}`, init));
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()).toString(),
  };
}

const serverOf = (deno: DenoFiles) => denoServer({ settings: SETTINGS }, deno, new URL('file:///site/'));

/** The answer computed from the edge files alone (no page file in the site). */
const computed = (query: string, files = build(INDEX, TAG, SETTINGS, [])) => answer(memoryDeno(files), query);

describe("Deno: a covered query answered with its page file's stream", () => {
  it.each(COVERED)('?%s: the computed answer, byte for byte, header for header, and no block read', async (query) => {
    const deno = memoryDeno(build(INDEX, TAG));
    const got = await answer(deno, query);
    expect(got.status).toBe(200);
    expect(got).toEqual(await computed(query));
    expect(deno.state).toMatchObject({ blocks: 0, opened: [expect.any(String)], closed: deno.state.opened });
  });

  it("three covered answers of one build: the site's real path looked up once, each page's directory each time", async () => {
    const deno = memoryDeno(build(INDEX, TAG));
    const server = serverOf(deno);
    for (const query of ['page=2', 'page_size=20&page=2', 'ordering=-name_en&page=3'])
      expect(await answer(deno, query, {}, server)).toEqual(await computed(query));
    expect(deno.state.blocks).toBe(0);
    expect(deno.state.realPaths.filter((path) => path === '')).toHaveLength(1);
    expect(deno.state.realPaths.filter((path) => path !== '')).toHaveLength(3);
  });

  it("the site rebuilt and moved (its directory replaced by a link elsewhere): the new build's file sent, the site looked up again", async () => {
    const other = indexOf(23, (i) => `M${i % 3}`);
    const deno = memoryDeno(build(INDEX, TAG));
    const server = serverOf(deno);
    await answer(deno, 'page=2', {}, server);
    deno.rebuild(build(other, 'ffeeddccbbaa9988'), '/data/site-2');
    const got = await answer(deno, 'page=2', {}, server);
    expect(got).toEqual(await computed('page=2', build(other, 'ffeeddccbbaa9988', SETTINGS, [])));
    // Sent from its file: the site's real path of before would have the page's directory outside it (computed).
    expect(deno.state).toMatchObject({ blocks: 0, opened: [expect.any(String), expect.any(String)] });
    expect(deno.state.realPaths.filter((path) => path === '')).toHaveLength(2);
  });

  it.each<[string, string, RequestInit | 'its etag']>([
    ['HEAD: nothing to send', 'page=2', { method: 'HEAD' }],
    ['If-None-Match naming its ETag: a 304', 'page=2', 'its etag'],
    ['an uncovered page size', 'page_size=7', {}],
    ['a multi-field ordering', 'ordering=name_en,-id', {}],
    ['JSON indented (Accept)', 'page=2', { headers: { accept: 'application/json; indent=4' } }],
  ])('%s: no page file opened', async (_, query, asked) => {
    const init = asked === 'its etag' ? { headers: { 'if-none-match': (await computed(query)).headers.etag! } } : asked;
    const deno = memoryDeno(build(INDEX, TAG));
    const got = await answer(deno, query, init);
    expect(got).toEqual(await answer(memoryDeno(build(INDEX, TAG, SETTINGS, [])), query, init));
    if (asked === 'its etag') expect(got.status).toBe(304);
    expect(deno.state.opened).toEqual([]);
  });
});

describe("a page file not sent as the build's own is closed, and the page computed", () => {
  const query = 'page=2';
  const page = staticPathFor(parseQuery(query), siteSpec(SETTINGS, 23))!;
  const other = (settings: Partial<SiteSettings>, index = INDEX) => build(index, TAG, { ...SETTINGS, ...settings });

  it.each<[string, () => Map<string, Uint8Array>, Twist]>([
    ["of another base URL (links not this answer's)", () => withPage(other({ baseUrl: 'http://old.example.com' })), {}],
    ['of another count (a rebuild of other data)', () => withPage(other({}, indexOf(24))), {}],
    ['empty (shorter than its envelope)', () => withBytes(new Uint8Array(0)), {}],
    [
      'a symbolic link (to a page of the same head elsewhere)',
      () => withExtra('elsewhere.json'),
      { links: { [page]: 'elsewhere.json' } },
    ],
    [
      'in a directory reached through a link',
      () => build(INDEX, TAG),
      { linkedDir: page.slice(0, page.lastIndexOf('/')) },
    ],
    ['replaced at its path once opened (another inode)', () => build(INDEX, TAG), { replacedAfterOpen: page }],
    ['its path a file of the same inode on another device', () => build(INDEX, TAG), { otherDevice: page }],
    ['its open refused', () => build(INDEX, TAG), { failing: 'open' }],
    ['its head unreadable', () => build(INDEX, TAG), { failing: 'read' }],
    ['its lstat failing', () => build(INDEX, TAG), { failing: 'lstat' }],
    ['a namespace without lstat and realPath (a stand-in)', () => build(INDEX, TAG), { noLstat: true }],
    ['a namespace whose files have no stream (a stand-in)', () => build(INDEX, TAG), { noReadable: true }],
  ])('%s', async (_, files, twist) => {
    const deno = memoryDeno(files(), twist);
    expect(await answer(deno, query)).toEqual(await computed(query));
    expect(deno.state.closed).toEqual(deno.state.opened);
    expect(deno.state.blocks).toBeGreaterThan(0);
  });

  it("the site rebuilt with other data as the file is opened (the new build's file): the new build computed, the file closed", async () => {
    const other = indexOf(23, (i) => `M${i % 3}`);
    const deno = memoryDeno(build(INDEX, TAG), { onPageOpen: (d) => d.rebuild(build(other, 'ffeeddccbbaa9988')) });
    const got = await answer(deno, query);
    expect(deno.state.opened).toEqual([page]);
    expect(deno.state.closed).toEqual([page]);
    expect(got).toEqual(await computed(query, build(other, 'ffeeddccbbaa9988', SETTINGS, [])));
    expect(got).not.toEqual(await computed(query));
  });

  /** The build's files with the page's file replaced by another build's page file. */
  function withPage(from: Map<string, Uint8Array>) {
    return withBytes(from.get(page)!);
  }
  function withBytes(bytes: Uint8Array) {
    const files = build(INDEX, TAG);
    files.set(page, bytes);
    return files;
  }
  /** The build's files, and a file of the same head as the page but other cities (a link's target). */
  function withExtra(name: string) {
    const files = build(INDEX, TAG);
    const bytes = files.get(page)!;
    const forged = Buffer.from(
      Buffer.from(bytes)
        .toString()
        .replace(/"N(\d)é"/g, '"X$1é"'),
    );
    files.set(name, new Uint8Array(forged));
    return files;
  }
});

describe('a page file that does not answer (a FIFO, a hung mount): computed after PAGE_FILE_MS', () => {
  afterEach(() => void vi.useRealTimers());
  const query = 'page=2';

  it.each<[string, (opened: Promise<void>) => Twist]>([
    ['its open: the file closed once it opens', (opened) => ({ hanging: { open: opened } })],
    ['its head read: the file closed', () => ({ hanging: { read: true } })],
  ])('%s', async (_, twist) => {
    const want = await computed(query);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let open!: () => void;
    const deno = memoryDeno(build(INDEX, TAG), twist(new Promise((resolve) => (open = resolve))));
    let done = false;
    const answered = answer(deno, query).finally(() => (done = true));
    await vi.advanceTimersByTimeAsync(PAGE_FILE_MS - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await answered).toEqual(want);
    open();
    await vi.waitFor(() => expect(deno.state.opened).toHaveLength(1));
    expect(deno.state.closed).toEqual(deno.state.opened);
  });
});
