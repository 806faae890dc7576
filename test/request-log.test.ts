import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { build } from '../src/app/build.js';
import { serve, type RunningServer } from '../src/app/serve.js';
import { clfTime, LogLines, loggedTarget, requestLine } from '../src/http/log-line.js';
import { Writable } from 'node:stream';
import { LOG_FLUSH_MS, LogBuffer, streamLog, WallClock } from '../src/http/request-log.js';
import { makeCity, tempDir } from './helpers.js';
import { rawRequest, ROOT } from './serve-helpers.js';

// The request log: what a line says (the Common Log Format, then the milliseconds, `closed` when
// the client left first), lines held and written together as nginx's `access_log ... buffer=64k
// flush=1s` (a write per request cost a third of the throughput, issue #26 item 4), the wall
// clock read once a second, and the line of each kind of answer a real serve sends.

const request = {
  client: '::1',
  time: Date.UTC(2026, 10, 26, 9, 5, 7),
  method: 'GET',
  target: '/cities/',
  protocol: '1.1',
  status: 200,
  bytes: 5123,
  ms: 12.34,
  finished: true,
};

describe('a line per answer: the Common Log Format, then ms', () => {
  it.each([
    ['a whole answer', {}, '::1 - - [26/Nov/2026:09:05:07 +0000] "GET /cities/ HTTP/1.1" 200 5123 12ms'],
    [
      'a client gone before the end',
      { finished: false },
      '::1 - - [26/Nov/2026:09:05:07 +0000] "GET /cities/ HTTP/1.1" 200 5123 12ms closed',
    ],
    [
      'no body, no client address',
      { bytes: 0, client: undefined, ms: 0.24 },
      '- - - [26/Nov/2026:09:05:07 +0000] "GET /cities/ HTTP/1.1" 200 - 0.2ms',
    ],
    [
      'a forged protocol is escaped',
      { protocol: '1.1" 200 1 "x' },
      String.raw`::1 - - [26/Nov/2026:09:05:07 +0000] "GET /cities/ HTTP/1.1\x22\x20200\x201\x20\x22x" 200 5123 12ms`,
    ],
    [
      'a forged method is escaped and cut',
      { method: `GET /x HTTP/1.1" 200 1 ${'a'.repeat(300)}` },
      String.raw`::1 - - [26/Nov/2026:09:05:07 +0000] "GET\x20/x\x20HTTP/1.1\x22\x20200\x201\x20` +
        `${'a'.repeat(156)}... /cities/ HTTP/1.1" 200 5123 12ms`,
    ],
  ])('%s', (_, change, expected) => expect(requestLine({ ...request, ...change })).toBe(expected));

  it.each([
    ['\x00\n\r', '\\x00\\x0a\\x0d'],
    ['/\x1b[31mforged\nGET / 200 1ms', '/\\x1b[31mforged\\x0aGET\\x20/\\x20200\\x201ms'],
    ['é', '\\xe9'],
    ['\u{1F600}', '\\xf0\\x9f\\x98\\x80'],
    ['a'.repeat(300), `${'a'.repeat(197)}...`],
    ['/"quoted"\\', '/\\x22quoted\\x22\\x5c'],
    ['/cities/?page=2&ordering=-name_en', '/cities/?page=2&ordering=-name_en'],
    ['a'.repeat(200), 'a'.repeat(200)],
  ])('the target %j is logged as %s', (target, shown) => {
    expect(loggedTarget(target)).toBe(shown);
    expect(requestLine({ ...request, target })).toContain(`"GET ${shown} HTTP/1.1"`);
  });

  // The line is written digit by digit; each figure reads as String() and toFixed() write it.
  it.each([
    ['0 ms', 0, '0.0ms'],
    ['a tenth rounded up', 0.05, '0.1ms'],
    ['0.25 (exact: up, as toFixed)', 0.25, '0.3ms'],
    ['0.35 (just under, in binary: down, as toFixed)', 0.35, '0.3ms'],
    ['9.96: 10.0, still in tenths', 9.96, '10.0ms'],
    ['10 and over: whole milliseconds', 10.5, '11ms'],
    ['long', 3_600_000.4, '3600000ms'],
  ])('the duration: %s', (_, ms, text) =>
    expect(
      requestLine({ ...request, ms })
        .split(' ')
        .at(-1),
    ).toBe(text),
  );

  it.each([
    ['no body: -', 0, ' -'],
    ['one byte', 1, ' 1'],
    ['ten', 10, ' 10'],
    ['a terabyte', 2 ** 40, ` ${2 ** 40}`],
  ])('the size: %s', (_, bytes, text) => expect(requestLine({ ...request, bytes }).split(' 200')[1]).toMatch(text));

  it('the time is written from its second, each line its own (the next second, the one before, the next day)', () => {
    const at = Date.UTC(2026, 10, 26, 9, 5, 7);
    const times = [at, at + 999, at + 1000, at + 999, at - 1, at + 86_400_000];
    const lines = new LogLines(16);
    for (const time of times) lines.append('::1', time, 'GET', '/', '1.1', 200, 1, 1, true);
    expect(
      lines
        .take()
        .split('\n')
        .map((line) => /\[(.*)\]/.exec(line)![1]),
    ).toEqual([
      '26/Nov/2026:09:05:07 +0000',
      '26/Nov/2026:09:05:07 +0000',
      '26/Nov/2026:09:05:08 +0000',
      '26/Nov/2026:09:05:07 +0000',
      '26/Nov/2026:09:05:06 +0000',
      '27/Nov/2026:09:05:07 +0000',
    ]);
    expect(clfTime(at)).toBe('26/Nov/2026:09:05:07 +0000');
  });
});

describe('LogBuffer writes lines together', () => {
  let written: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    written = [];
  });
  afterEach(() => vi.useRealTimers());

  const line = (target: string) => requestLine({ ...request, target });
  /** Bytes a line takes in the buffer, its newline included. */
  const size = line('/a').length + 1;
  const add = (buffer: LogBuffer, target: string) =>
    buffer.append('::1', request.time, 'GET', target, '1.1', 200, 5123, 12.34, true);

  it.each([
    ['nothing before the buffer fills or a second passes', 3 * size, ['/a', '/b'], LOG_FLUSH_MS - 1, []],
    ['every held line, one write, a second after the first', 3 * size, ['/a', '/b'], LOG_FLUSH_MS, [['/a', '/b']]],
    ['at once when the lines reach the buffer size', 2 * size, ['/a', '/b'], 0, [['/a', '/b']]],
    [
      'what came after a full buffer, a second later',
      2 * size,
      ['/a', '/b', '/c'],
      LOG_FLUSH_MS,
      [['/a', '/b'], ['/c']],
    ],
  ])('%s', (_, bytes, targets, ms, expected) => {
    const buffer = new LogBuffer((text) => written.push(text), bytes);
    for (const target of targets) add(buffer, target);
    vi.advanceTimersByTime(ms);
    expect(written).toEqual(expected.map((batch) => batch.map(line).join('\n')));
  });

  it.each([
    ['flush() writes what is held at once (a server that closes)', ['/a', '/b'], [['/a', '/b']]],
    ['flush() with nothing held writes nothing', [], []],
  ])('%s', (_, targets, expected) => {
    const buffer = new LogBuffer((text) => written.push(text));
    for (const target of targets) add(buffer, target);
    buffer.flush();
    vi.advanceTimersByTime(10 * LOG_FLUSH_MS);
    expect(written).toEqual(expected.map((batch) => batch.map(line).join('\n')));
  });
});

describe('streamLog: batches onto a stream that may stop reading', () => {
  /** A stream whose writes complete only when release() is called: a pipe read slowly, or not at all. */
  function slowStream() {
    const written: string[] = [];
    const pending: (() => void)[] = [];
    const out = new Writable({
      write(chunk, _, done) {
        written.push(String(chunk));
        pending.push(done);
      },
    });
    const release = async () => {
      while (pending.length) pending.shift()!();
      await new Promise((r) => setImmediate(r));
    };
    return { out, written, release };
  }
  /** Ten lines of 9 characters: 100 bytes with their newlines. */
  const batch = (name: string) => Array.from({ length: 10 }, (_, i) => `${name}-line${i}`.padEnd(9, '.')).join('\n');

  it.each([
    ['each batch written with its last newline while the stream keeps up', 10, 0],
    ['past the bound (250 bytes held), batches are dropped, not held: 3 held, 7 dropped', 0, 7],
    ['a stream that stops reading late: only the batches past the bound are dropped', 6, 1],
  ])('%s', async (_, readUntil, dropped) => {
    const { out, written, release } = slowStream();
    const log = streamLog(out, 250);
    for (let i = 0; i < 10; i++) {
      log(batch(`b${i}`));
      expect(out.writableLength).toBeLessThanOrEqual(300);
      if (i < readUntil) await release();
    }
    await release();
    const lines = written
      .join('')
      .split('\n')
      .filter((line) => !line.startsWith('request log:'));
    expect(lines.filter(Boolean).length).toBe(10 * (10 - dropped));
  });

  it('once the stream drains, a line says how many lines were lost, then batches are written again', async () => {
    const { out, written, release } = slowStream();
    const log = streamLog(out, 250);
    for (let i = 0; i < 6; i++) log(batch(`b${i}`));
    await release();
    log(batch('after'));
    await release();
    expect(written.slice(-2)).toEqual([
      "request log: 30 lines dropped, the log's reader did not keep up\n",
      `${batch('after')}\n`,
    ]);
  });
});

describe("WallClock: a request's second from the monotonic clock, Date.now() read about once a second", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    vi.setSystemTime(Date.UTC(2026, 10, 26, 9, 5, 7, 400));
  });
  afterEach(() => vi.useRealTimers());

  it.each([
    ['within a second', [0.3, 100, 499]],
    ['across the end of a second, a millisecond at a time', [598, 0.5, 0.5, 0.5, 0.5]],
    ['across many seconds', [1000, 1000.25, 2500, 86_400_000]],
    ['in steps of a tenth of a millisecond about the end of a second', Array.from({ length: 30 }, () => 0.1)],
  ])("%s: each reading gives Date.now()'s second", (_, steps) => {
    const clock = new WallClock();
    for (const step of steps) {
      vi.advanceTimersByTime(step);
      expect(clfTime(clock.wall(performance.now()))).toBe(clfTime(Date.now()));
    }
  });

  it('reads Date.now() about once a second, not once a request', () => {
    const clock = new WallClock();
    const reads = vi.spyOn(Date, 'now');
    for (let i = 0; i < 1000; i++) {
      vi.advanceTimersByTime(3);
      clock.wall(performance.now());
    }
    expect(reads.mock.calls.length).toBeLessThanOrEqual(2 * 3 + 3); // 3 s of requests: a read or two a second
  });

  it('a wall clock set forward is followed within a second', () => {
    const clock = new WallClock();
    clock.wall(performance.now());
    vi.setSystemTime(Date.now() + 3_600_000);
    vi.advanceTimersByTime(1000);
    expect(clfTime(clock.wall(performance.now()))).toBe(clfTime(Date.now()));
  });
});

// The size is what body-bytes.ts counted: a body written to a response any other way would be
// missing from it. Responses are named `res` (or `response`) throughout src/.
describe("every response body src/ writes is counted for the log's size", () => {
  const WRITES_BODY = /\b(?:res|response)\.(?:write|end)\(\s*[^)\s]/;
  it.each([
    ['res.end(body)', true],
    ['this.res.write(chunk)', true],
    ['response.end(Buffer.from(x))', true],
    ['res.end()', false],
    ['socket.end(bytes)', false],
    ['endBody(res, body)', false],
  ])('the check reads %s as a body written: %s', (line, writes) => expect(WRITES_BODY.test(line)).toBe(writes));

  it('src/ writes none but through writeBody() and endBody() (body-bytes.ts; comments aside)', () => {
    const src = join(ROOT, 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('body-bytes.ts'),
    );
    const writes = files.flatMap((file) =>
      readFileSync(join(src, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          WRITES_BODY.test(line) && !/^\s*(?:\/\/|\/?\*)/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(writes).toEqual([]);
  });
});

// A real serve: the line of each kind of answer says the client's target, the status, and the
// body bytes the client got. Cities with long names: the one-page answer is about 18 MB (over
// 1 MiB, sirv streams its file; and more than the kernel takes of it for a client that reads
// nothing, about 4 MB on loopback), and a large computed page is sent in parts.
describe('the line of each kind of answer, from a real serve', () => {
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let logged = '';
  const lines = () => logged.split('\n').filter(Boolean);
  beforeAll(async () => {
    let dir: string;
    ({ dir, cleanup } = await tempDir('cities-request-log-'));
    const long = (id: number) => `${'Ville-de-la-longue-rue-'.repeat(10)}${id}`;
    await writeFile(
      join(dir, 'cities.json'),
      JSON.stringify(Array.from({ length: 5000 }, (_, i) => makeCity(i + 1, { name: long(i + 1) }))),
    );
    // Built without .gz/.br (no request here asks for them; they were a quarter of the build's CPU: the CLI's build of
    // this dataset took 6.8 CPU-s with them, 5.1 without, at load 15), then served as built.
    await build({
      data: join(dir, 'cities.json'),
      out: join(dir, 'site'),
      baseUrl: 'http://x',
      collation: 'codepoint',
      orderings: ['default'],
      pageSizes: [10],
      compression: 'none',
    });
    server = await serve({ dir: join(dir, 'site'), port: 0, requestLog: (text) => (logged += `${text}\n`) });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });
  /** The `nth` line logged for `method target`, once written (lines are held up to a second). */
  async function lineOf(method: string, target: string, nth = 1): Promise<string> {
    const mine = () => lines().filter((line) => line.includes(`"${method} ${target} HTTP/1.1"`))[nth - 1];
    for (let i = 0; i < 100 && !mine(); i++) await new Promise((r) => setTimeout(r, 25));
    return mine() ?? `no line ${nth} for ${method} ${target} in:\n${logged}`;
  }
  const fields = (line: string) => {
    const [, status, size, ms, closed] = /" (\d{3}) (\d+|-) (\d+(?:\.\d)?)ms( closed)?$/.exec(line) ?? [];
    return { status: Number(status), size, ms, closed: closed !== undefined };
  };

  // Each target once in the file (twice in a row for the cached answer): its line is found by it.
  it.each([
    ['a precomputed page, from memory', 'GET', '/cities/?page=2', 1],
    ['a page computed live', 'GET', '/cities/?page_size=7&page=3', 1],
    ['a page from the answer cache (asked again)', 'GET', '/cities/?page_size=7&page=3', 2],
    [
      'a one-page answer over 1 MiB, streamed by sirv: the target as the client sent it',
      'GET',
      '/cities/?page_size=5000',
      1,
    ],
    ['a computed page over 1 MiB, sent in parts', 'GET', '/cities/?ordering=-name_fr&page_size=2000', 1],
    ['HEAD: no body, size -', 'HEAD', '/cities/?page=3', 1],
    ['HEAD of a streamed file', 'HEAD', '/cities/?page_size=6000', 1],
    ['a 404', 'GET', '/nowhere', 1],
    ['OPTIONS', 'OPTIONS', '/cities/', 1],
    ['the preview index page', 'GET', '/', 1],
    ['the OpenAPI document', 'GET', '/openapi.json', 1],
  ])('%s', async (_, method, target, nth) => {
    const res = await rawRequest(`${server.url}${target}`, { method });
    const line = await lineOf(method, target, nth);
    expect(line).toMatch(/^127\.0\.0\.1 - - \[\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "/);
    expect(fields(line)).toEqual({
      status: res.status,
      size: res.body.length ? String(res.body.length) : '-',
      ms: expect.any(String),
      closed: false,
    });
    if (method === 'HEAD') expect(Number(res.headers['content-length'])).toBeGreaterThan(0);
  });

  it('a 304: no body, size -', async () => {
    const target = '/cities/?page=4';
    const { etag } = (await rawRequest(`${server.url}${target}`, { method: 'HEAD' })).headers;
    const res = await rawRequest(`${server.url}${target}`, { headers: { 'if-none-match': etag as string } });
    expect(res.status).toBe(304);
    expect(fields(await lineOf('GET', target))).toMatchObject({ status: 304, size: '-', closed: false });
  });

  /** A raw connection to the server that sends `text` and reads nothing. */
  const unread = (text: string) => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => socket.write(text));
    socket.pause();
    return socket;
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('requests pipelined behind an answer the client leaves: each logged `closed`, with no body (node never closes their responses)', async () => {
    const queued = ['/cities/?page=7', '/cities/?page=8', '/openapi.json?queued'];
    const socket = unread(
      ['/cities/?page_size=8000', ...queued].map((target) => `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''),
    );
    await sleep(500);
    socket.destroy();
    for (const target of queued)
      expect(fields(await lineOf('GET', target))).toEqual({
        status: 200,
        size: '-',
        ms: expect.any(String),
        closed: true,
      });
  });

  it('the OpenAPI document pipelined by a client that reads nothing: read and held one at a time (the send gate), not once per request', async () => {
    const size = (await rawRequest(`${server.url}/openapi.json`)).body.length;
    const requests = 3000;
    // Node parses what arrived before it pauses a connection whose answers wait: well over half of them without a gate.
    expect(size * requests).toBeGreaterThan(40 * 2 ** 20);
    const before = process.memoryUsage().arrayBuffers;
    const socket = unread(`GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(requests));
    await sleep(1500);
    const grown = process.memoryUsage().arrayBuffers - before;
    socket.destroy();
    expect(grown).toBeLessThan(10 * 2 ** 20);
  });

  it('a client that leaves in the middle of a streamed file: `closed`, the bytes handed to node until then', async () => {
    const target = '/cities/?page_size=7000';
    const whole = Number((await rawRequest(`${server.url}${target}`, { method: 'HEAD' })).headers['content-length']);
    const { port } = new URL(server.url);
    // A client that reads nothing: what the kernel's buffers hold is far less than the file.
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`));
    socket.pause();
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.destroy();
    const { status, size, closed } = fields(await lineOf('GET', target));
    expect([status, closed]).toEqual([200, true]);
    expect(Number(size)).toBeGreaterThan(0);
    expect(Number(size)).toBeLessThan(whole);
  });
});
