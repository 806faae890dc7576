import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
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

/** The project in `projectRoot` under @netlify/dev: its URL, how many requests each part answered, and stop(). */
export async function netlifyDev(projectRoot: string, options: { edgeFunctions: boolean; denoBin?: string }) {
  const { NetlifyDev } = (await import('@netlify/dev')) as unknown as { NetlifyDev: new (options: object) => Dev };
  if (options.denoBin) process.env.PATH = `${options.denoBin}:${process.env.PATH}`;
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
