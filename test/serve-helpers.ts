import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { serve, type ServeOptions } from '../src/app/serve.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { following, printed } from './started-process.js';

export const ROOT = join(import.meta.dirname, '..');

/** Starts the real CLI (`bin/cities-api.js serve ...`) and resolves once it prints its URL (test/started-process.ts). */
export async function startCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; child: ChildProcess; output: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/cities-api.js'), 'serve', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const starting = following(child, 'serve');
  const url = await printed(starting, / at (http:\/\/[^/\s]+)/);
  return { url, child, output: starting.output, stop: starting.stop };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One request with node:http, so bodies arrive exactly as sent (no automatic decompression).
 * `fresh`: on a connection of its own, closed after the answer. A kept-alive connection idle for
 * about the server's keep-alive timeout can be closed by the server as the next request is sent on
 * it: on a loaded machine that request failed (ECONNRESET), or was never answered.
 */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    fresh?: boolean;
    /** Fails with RequestTimeout once the answer has not ended within this many ms (none: waits). */
    timeoutMs?: number;
  } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const agent = options.fresh ? { agent: false } : {};
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, ...agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    if (options.timeoutMs !== undefined) {
      const timer = setTimeout(() => req.destroy(new RequestTimeout(options.timeoutMs!)), options.timeoutMs);
      req.on('close', () => clearTimeout(timer));
    }
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A GET of `target` exactly as written, on a connection of its own: a URL given to http.request would lose its dot segments. */
export function asSent(origin: string, target: string): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: target, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** rawRequest's answer did not end in time. */
export class RequestTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no complete answer within ${ms / 1000} s`);
  }
}

/** A writable server of one ordering and one page size: each catch-up build is a few files. */
export const smallWritable = (dir: string, data: string, token: string, more: Partial<ServeOptions> = {}) =>
  serve({
    dir,
    data,
    port: 0,
    writable: true,
    token,
    collation: 'codepoint',
    orderings: ['default'],
    pageSizes: [10],
    ...more,
  });

/** A site of one ordering and one page size in files (the rest computed live): each build is a few files. */
export const SMALL_SITE = ['--collation', 'codepoint', '--orderings', 'default', '--page-sizes', '10'];

/** `serve SITE --data DATA --writable` as a real process (startCli), of a SMALL_SITE. */
export const writableCli = (site: string, data: string, token: string) =>
  startCli([site, '--data', data, '--port', '0', '--writable', ...SMALL_SITE], { CITIES_API_TOKEN: token });

/** POSTs a city named `name` (every name field) to the server at `url` (its origin). */
export const createAt = (url: string, token: string, name: string) =>
  rawRequest(`${url}/cities/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Token ${token}` },
    body: JSON.stringify(Object.fromEntries(NAME_FIELDS.map((f) => [f, name]))),
  });

/** The English names the server at `url` (its origin) answers, up to 100. */
export const servedAt = async (url: string) =>
  (
    JSON.parse((await rawRequest(`${url}/cities/?page_size=100`)).body.toString()) as { results: { name_en: string }[] }
  ).results.map((c) => c.name_en);
