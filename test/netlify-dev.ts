import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DENO } from './edge-helpers.js';

// A Netlify project under Netlify's local runtime (@netlify/dev: static files, _redirects,
// _headers, and edge functions run by its Deno server), behind an HTTP server as `netlify dev`
// puts it. @netlify/dev starts Deno with `deno eval --allow-scripts ...`, a flag the Deno 2.9 of
// the npm `deno` package refuses for eval: a `deno` first on PATH runs that Deno without the flag
// (the one change; nothing is downloaded).

interface Dev {
  start(): Promise<unknown>;
  stop(): Promise<void>;
  handleAndIntrospect(request: Request): Promise<{ response: Response; type: string } | undefined>;
}

/** A directory holding a `deno` that runs the npm package's Deno without `--allow-scripts`. */
export async function denoForNetlifyDev(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const shim = join(dir, 'deno');
  // exec: the Deno @netlify/dev stops is Deno itself, not a process in between.
  const script = [
    '#!/bin/sh',
    'for a in "$@"; do shift; [ "$a" = --allow-scripts ] || set -- "$@" "$a"; done',
    `exec '${DENO.replace(/'/g, `'\\''`)}' "$@"`,
    '',
  ].join('\n');
  await writeFile(shim, script);
  await chmod(shim, 0o755);
  return dir;
}

/** What @netlify/dev's edge function handler asks its Deno server for every request: each function's in-source config. */
type ReadConfigs = (denoPort: number, functions: Record<string, string>) => Promise<unknown>;
const READ_ONCE = Symbol.for('cities-api.test.netlifyConfigsOnce');

/**
 * Netlify reads an edge function's in-source config once, when it bundles a deploy; @netlify/dev
 * reads it again at each request (its Deno server starts a Worker that imports every function,
 * about half of the runtime's CPU per request: 80 kit requests 11 -> 6 CPU-s), so that an edit
 * shows at once. Here a runtime reads them again only when a file in a function's directory has
 * changed, as a new deploy would (the tests write each case's project where one runtime serves).
 * The request itself still runs in a fresh Worker that imports the functions as they stand.
 */
async function readConfigsOncePerDeploy(): Promise<void> {
  const { EdgeFunctionsHandler } = (await import('@netlify/edge-functions-dev')) as unknown as {
    EdgeFunctionsHandler: { prototype: { getFunctionConfigs: ReadConfigs; [READ_ONCE]?: true } };
  };
  const handler = EdgeFunctionsHandler.prototype;
  if (handler[READ_ONCE]) return;
  handler[READ_ONCE] = true;
  const read = handler.getFunctionConfigs;
  const lastRead = new WeakMap<object, { deploy: string; configs: Promise<unknown> }>();
  handler.getFunctionConfigs = async function (this: object, denoPort, functions) {
    // Each function's directory, whose files its entry imports (the site's settings, cities-api's bundle).
    const hash = createHash('sha256').update(JSON.stringify(functions));
    for (const dir of new Set(Object.values(functions).map((url) => dirname(fileURLToPath(url)))))
      for (const entry of (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()))
        hash.update(join(entry.parentPath, entry.name)).update(await readFile(join(entry.parentPath, entry.name)));
    const deploy = hash.digest('hex');
    let last = lastRead.get(this);
    if (last?.deploy !== deploy) {
      last = { deploy, configs: read.call(this, denoPort, functions) };
      lastRead.set(this, last);
    }
    return last.configs;
  };
}

/** The project in `projectRoot` under @netlify/dev: its URL, how many requests each part answered, and stop(). */
export async function netlifyDev(projectRoot: string, options: { edgeFunctions: boolean; denoBin?: string }) {
  const { NetlifyDev } = (await import('@netlify/dev')) as unknown as { NetlifyDev: new (options: object) => Dev };
  if (options.denoBin) process.env.PATH = `${options.denoBin}:${process.env.PATH}`;
  await readConfigsOncePerDeploy();
  const off = { enabled: false };
  const dev = new NetlifyDev({
    projectRoot,
    // Without edge functions nothing calls back into the server; with them, @netlify/dev starts its own for context.next().
    ...(options.edgeFunctions ? {} : { serverAddress: 'http://127.0.0.1:9' }),
    blobs: off,
    database: off,
    images: off,
    aiGateway: off,
    geolocation: off,
    edgeFunctions: { enabled: options.edgeFunctions },
    environmentVariables: off,
    logger: { log() {}, warn: console.warn, error: console.error },
  });
  await dev.start();
  // @netlify/dev fetches an edge function's answer following redirects (its Request drops the
  // client's redirect mode); Netlify and `netlify dev` pass a redirect on to the client, as here.
  const realFetch = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) =>
    init instanceof Request && init.headers.has('x-nf-edge-functions')
      ? realFetch(input, new Request(init, { redirect: 'manual', duplex: 'half' } as RequestInit))
      : realFetch(input, init);
  const answeredBy = new Map<string, number>();
  let url = '';
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const headers = Object.entries(req.headers).flatMap(([k, v]) =>
        v === undefined ? [] : [[k, String(v)] as [string, string]],
      );
      // The request's origin is the server's own, as Netlify's is the site's: the function reads the edge files from it.
      const found = await dev.handleAndIntrospect(
        new Request(`${url}${req.url}`, {
          method: req.method,
          headers,
          body: hasBody ? Buffer.concat(chunks) : undefined,
        }),
      );
      const type = found?.type ?? 'none';
      answeredBy.set(type, (answeredBy.get(type) ?? 0) + 1);
      if (!found) return void res.writeHead(404, { 'content-type': 'text/html' }).end('Not Found');
      const sent = Object.fromEntries([...found.response.headers].filter(([k]) => k !== 'transfer-encoding'));
      res.writeHead(found.response.status, sent);
      res.end(req.method === 'HEAD' ? undefined : Buffer.from(await found.response.arrayBuffer()));
    })().catch((error: Error) => res.writeHead(500).end(error.stack));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    answeredBy,
    stop: async () => {
      globalThis.fetch = realFetch;
      server.close();
      await dev.stop();
    },
  };
}
