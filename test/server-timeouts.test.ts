import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../src/app/serve.js';
import { DEFAULT_LIMITS, resolveLimits } from '../src/http/limits.js';
import { KIT, tempDir } from './helpers.js';
import { rawExchange } from './raw-http.js';

// A slow client cannot hold the server: short limits here (the defaults are seconds), each
// checked against a client that sends too slowly or stops, on a writable server so POST
// bodies are really read.

const TOKEN = 'timeout-test-token';
const LIMITS = { headersTimeout: 500, requestTimeout: 1500, bodyTimeout: 500, keepAliveTimeout: 500 };
let cleanup: () => Promise<void>;
let server: RunningServer;
const logs: string[] = [];

beforeAll(async () => {
  let root: string;
  ({ dir: root, cleanup } = await tempDir('cities-timeouts-'));
  await copyFile(join(KIT, 'cities11.csv'), join(root, 'cities.csv'));
  server = await serve({
    dir: join(root, 'site'),
    data: join(root, 'cities.csv'),
    port: 0,
    writable: true,
    token: TOKEN,
    limits: LIMITS,
    log: (line) => logs.push(line),
  });
});
afterAll(async () => {
  await server.close();
  await cleanup();
});

const post = (headers: string) =>
  `POST /cities/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Token ${TOKEN}\r\nContent-Type: application/json\r\n${headers}\r\n`;
const detail = (body: Buffer) => (JSON.parse(body.toString()) as { detail: string }).detail;

describe('slow clients are cut off', () => {
  it('headers sent a byte at a time → 408 within the headers timeout, connection closed', async () => {
    const res = await rawExchange(
      server.url,
      `GET /cities/ HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'s'.repeat(100)}\r\n\r\n`,
      { drip: { bytes: 1, every: 20 } },
    );
    expect([res.status, res.headers['content-type'], res.closed]).toEqual([408, 'application/json', true]);
    expect(detail(res.body)).toMatch(/^Request timeout/);
    expect(res.ms).toBeGreaterThanOrEqual(450);
    expect(res.ms).toBeLessThan(1200);
  });

  it('a connection that sends nothing is closed after the headers timeout', async () => {
    const res = await rawExchange(server.url, '');
    expect([res.status, res.closed]).toEqual([408, true]);
    expect(res.ms).toBeLessThan(1200);
  });

  it('a POST body that stops → 408 JSON after the body timeout, connection closed', async () => {
    const res = await rawExchange(server.url, `${post('Content-Length: 100\r\n')}{"name_en":`);
    expect([res.status, res.headers.connection, res.closed]).toEqual([408, 'close', true]);
    expect(detail(res.body)).toBe('Request body timeout: no data for 500 ms.');
    expect(res.ms).toBeLessThan(1200);
  });

  it('a chunked POST body that stops → 408', async () => {
    const res = await rawExchange(server.url, `${post('Transfer-Encoding: chunked\r\n')}5\r\n{"nam\r\n`);
    expect([res.status, res.closed]).toEqual([408, true]);
    expect(res.ms).toBeLessThan(1200);
  });

  it('a POST body trickling in (never idle long enough) is ended by the request timeout', async () => {
    const head = post('Content-Length: 1000\r\n');
    const res = await rawExchange(server.url, `${head}${' '.repeat(1000)}`, {
      drip: { bytes: 1, every: 100, from: head.length },
    });
    expect([res.status, res.closed]).toEqual([408, true]);
    expect(detail(res.body)).toMatch(/whole request within 1500 ms/);
    expect(res.ms).toBeGreaterThanOrEqual(1450);
    expect(res.ms).toBeLessThan(2500);
  });

  it('an idle keep-alive connection is closed after its answer', async () => {
    const res = await rawExchange(server.url, 'GET /cities/ HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect([res.status, res.closed]).toEqual([200, true]);
    expect(res.ms).toBeLessThan(2500); // node adds up to a second to keepAliveTimeout
  });

  it('a quick POST is still answered', async () => {
    const body = '{}';
    const res = await rawExchange(
      server.url,
      `${post(`Content-Length: ${body.length}\r\nConnection: close\r\n`)}${body}`,
    );
    expect(res.status).toBe(400);
  });

  it('a chunked body over 64 KiB → 413 JSON (the client reads it), connection closed', async () => {
    const chunk = `${(8192).toString(16)}\r\n${' '.repeat(8192)}\r\n`;
    const res = await rawExchange(server.url, `${post('Transfer-Encoding: chunked\r\n')}${chunk.repeat(9)}0\r\n\r\n`);
    expect([res.status, res.headers.connection, res.closed]).toEqual([413, 'close', true]);
    expect(detail(res.body)).toBe('Request body is larger than 65536 bytes.');
  });

  it('no cut-off request left an error behind', () => {
    expect(logs.filter((l) => l.startsWith('error'))).toEqual([]);
  });
});

describe('limits are checked', () => {
  it('defaults: seconds, not minutes', () => {
    expect(resolveLimits()).toEqual(DEFAULT_LIMITS);
    expect(DEFAULT_LIMITS).toMatchObject({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      bodyTimeout: 10_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 65_536,
    });
  });

  it.each([
    [{ headersTimeout: 0 }, /headersTimeout must be a positive integer/],
    [{ bodyTimeout: 1.5 }, /bodyTimeout must be a positive integer/],
    [{ headersTimeout: 40_000 }, /must not exceed requestTimeout/],
    [{ maxHeaderSize: 4096 }, /must exceed the 8192-byte request target limit/],
    [{ maxPipelinedRequests: 1 }, /maxPipelinedRequests must be at least 2, not 1/],
  ])('%j is refused', async (limits, message) => {
    expect(() => resolveLimits(limits)).toThrow(message);
    await expect(serve({ dir: 'unused', port: 0, limits })).rejects.toThrow(message);
  });
});
