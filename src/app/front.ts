import type { AddressInfo } from 'node:net';
import type { CityStore } from '../post/city-store.js';
import { CitiesApiError } from '../core/errors.js';
import { createHttpServer } from '../http/node-server.js';
import { SendGate } from '../http/send-gate.js';
import { answerConnect, createHandler } from '../http/node-handler.js';
import type { ServerLimits } from '../http/limits.js';
import type { LiveSite } from './live-site.js';

export interface RunningServer {
  /** `http://host:port`, where the server listens. */
  readonly url: string;
  /** Where `/cities/` is answered. */
  readonly apiUrl: string;
  close(): Promise<void>;
}

export interface FrontOptions {
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  readonly token?: string | undefined;
  readonly limits: ServerLimits;
  readonly failoverOrigin?: boolean | undefined;
  readonly log: (line: string) => void;
}

/** A listening HTTP server whose requests wait until open() gives it the site to answer from. */
export interface Front {
  /** `http://host:port`, where it listens. */
  readonly url: string;
  open(live: LiveSite, writer: CityStore | undefined): void;
  close(): Promise<void>;
}

/** Listens at once (the port is known before any build); requests are answered once open() is called. */
export async function startFront(options: FrontOptions): Promise<Front> {
  const { limits, log } = options;
  let live: LiveSite | undefined;
  let writer: CityStore | undefined;
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const handler = createHandler({
    site: () => live!.current,
    track: (res) => live!.track(res),
    get writer() { return writer; },
    token: options.token,
    bodyTimeout: limits.bodyTimeout,
    gate: new SendGate(limits.maxBufferedBytes, limits.sendTimeout),
    onError: (e) => log(`error: ${(e as Error).stack ?? String(e)}`),
    filePaths: options.failoverOrigin,
  });
  const server = createHttpServer({
    limits,
    handler: (req, res) => (live ? handler(req, res) : void started.then(() => handler(req, res))),
    answerConnect: async (req) => {
      if (!live) await started;
      return answerConnect(req, live!.current.context);
    },
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new CitiesApiError(`port ${options.port} on ${host} is already in use; choose another with --port`) : error));
    server.listen(options.port ?? 8080, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    open(site, store) {
      [live, writer] = [site, store];
      ready();
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
