import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CityStore } from '../post/city-store.js';
import { createHttpServer } from '../http/node-server.js';
import { listen } from '../http/listen.js';
import { withPreviewPages } from '../http/preview-pages.js';
import { withRequestLog } from '../http/request-log.js';
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
  readonly dir: string;
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  readonly token?: string | undefined;
  readonly limits: ServerLimits;
  readonly failoverOrigin?: boolean | undefined;
  readonly requestLog?: ((line: string) => void) | undefined;
  readonly previewPages?: boolean | undefined;
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
    get writer() {
      return writer;
    },
    token: options.token,
    bodyTimeout: limits.bodyTimeout,
    gate: new SendGate(limits.maxBufferedBytes, limits.sendTimeout),
    onError: (e) => log(`error: ${(e as Error).stack ?? String(e)}`),
    filePaths: options.failoverOrigin,
  });
  const whenReady = (req: IncomingMessage, res: ServerResponse) =>
    live ? handler(req, res) : void started.then(() => handler(req, res));
  const previewed =
    (options.previewPages ?? true)
      ? withPreviewPages(whenReady, { dir: options.dir, context: async () => (await started, live!.current.context) })
      : whenReady;
  const server = createHttpServer({
    limits,
    handler: options.requestLog ? withRequestLog(previewed, options.requestLog) : previewed,
    answerConnect: async (req) => {
      if (!live) await started;
      return answerConnect(req, live!.current.context);
    },
  });
  const listening = await listen(server, options.port ?? 8080, options.host ?? '127.0.0.1');
  return {
    url: listening.url,
    open(site, store) {
      [live, writer] = [site, store];
      ready();
    },
    close: () => listening.close(),
  };
}
