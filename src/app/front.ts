import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CityStore } from '../post/city-store.js';
import { createHttpServer } from '../http/node-server.js';
import { listen } from '../http/listen.js';
import { withPreviewPages } from '../http/preview-pages.js';
import { LogBuffer, withRequestLog } from '../http/request-log.js';
import { endBody } from '../http/body-bytes.js';
import { SendGate } from '../http/send-gate.js';
import { createHandler, type HandlerOptions } from '../http/node-handler.js';
import { answerConnect } from '../http/raw-answer.js';
import type { ServerLimits } from '../http/limits.js';
import type { LiveSite } from './live-site.js';
import { warmUp } from './warm-up.js';
import { detailJson } from '../core/json-text.js';
import { ROUTES } from '../core/route-table.js';

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
  /** Gets the request log's lines in batches (see ServeOptions.requestLog). */
  readonly requestLog?: ((lines: string) => void) | undefined;
  readonly previewPages?: boolean | undefined;
  readonly log: (line: string) => void;
}

/** Seconds a client is asked to wait while the site is first built. */
const RETRY_AFTER_SECONDS = 5;

function notReady(res: ServerResponse): void {
  const body = Buffer.from(detailJson('The site is being built; try again shortly.'));
  res.writeHead(503, {
    [ROUTES.header.contentType]: ROUTES.contentType.json,
    [ROUTES.header.retryAfter]: String(RETRY_AFTER_SECONDS),
    [ROUTES.header.contentLength]: String(body.length),
  });
  endBody(res, body);
}

/** A listening HTTP server whose requests are answered 503 (Retry-After) until open() gives it the site to answer from. */
export interface Front {
  /** `http://host:port`, where it listens. */
  readonly url: string;
  open(live: LiveSite, writer: CityStore | undefined): void;
  /**
   * Has a private listener with this server's request path answer `live`'s pages of each kind first,
   * if it has `least` cities or more (WARM_UP_CITIES; warm-up.ts); `writer` as open() will be given.
   */
  warmUp(live: LiveSite, writer: CityStore | undefined, least?: number): Promise<void>;
  close(): Promise<void>;
}

/** Listens at once (the port is known before any build); requests get a 503 until open() is called. */
export async function startFront(options: FrontOptions): Promise<Front> {
  const { limits, log } = options;
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  // What the handlers answer from: set by warmUp() (whose private listener answers through these same
  // handlers: V8 compiles one path, for the closures and shapes clients meet) or open(); clients wait for open().
  const answering: { live: LiveSite | undefined } = { live: undefined };
  let live: LiveSite | undefined;
  // The writer is set by open(): a data property, read per request (a getter went through V8's generic load).
  const handling: HandlerOptions & { writer: CityStore | undefined } = {
    site: () => answering.live!.current,
    track: (res) => answering.live!.track(res),
    writer: undefined,
    token: options.token,
    bodyTimeout: limits.bodyTimeout,
    gate: new SendGate(limits.maxBufferedBytes, limits.sendTimeout),
    onError: (e) => log(`error: ${(e as Error).stack ?? String(e)}`),
    filePaths: options.failoverOrigin,
    answerCacheBytes: limits.answerCacheBytes,
  };
  const handler = createHandler(handling);
  const answer =
    (options.previewPages ?? true)
      ? withPreviewPages(handler, {
          dir: options.dir,
          context: async () => (await started, answering.live!.current.context),
          gate: handling.gate,
        })
      : handler;
  const connectAnswer = (req: IncomingMessage) => answerConnect(req, answering.live!.current.context);
  // Until the site is open (its first build can take minutes), a request waits firstBuildHold at
  // most (a quick build is never seen), then is told to come back: never a hanging connection.
  const previewed = (req: IncomingMessage, res: ServerResponse) => {
    if (live) return answer(req, res);
    let timer: NodeJS.Timeout | undefined;
    const held = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, limits.firstBuildHold, false)));
    void Promise.race([started.then(() => true), held]).then((open) => {
      clearTimeout(timer);
      if (res.destroyed) return;
      if (open) answer(req, res);
      else notReady(res);
    });
  };
  const requests = options.requestLog && new LogBuffer(options.requestLog);
  // With a request log, the warm-up's requests go through the same wrapper into a log nobody reads: V8
  // compiles it, and the sockets take the property it adds (their client's address) before any client
  // comes. Else the first clients' requests compiled it, and every function of the request path
  // compiled on sockets without it was thrown away ('wrong map'): 42 deoptimizations in the first 2 s
  // of load, against 12 with --quiet.
  const warmUpHandler = requests ? withRequestLog(answer, new LogBuffer(() => {})) : answer;
  const server = createHttpServer({
    limits,
    handler: requests ? withRequestLog(previewed, requests) : previewed,
    answerConnect: async (req) => {
      if (!live) await started;
      return connectAnswer(req);
    },
  });
  const listening = await listen(server, options.port ?? 8080, options.host ?? '127.0.0.1');
  return {
    url: listening.url,
    open(site, store) {
      answering.live = live = site;
      handling.writer = store;
      ready();
    },
    async warmUp(site, store, least) {
      answering.live = site;
      handling.writer = store;
      try {
        await warmUp(
          createHttpServer({ limits, handler: warmUpHandler, answerConnect: async (req) => connectAnswer(req) }),
          site.current.context,
          least,
        );
      } finally {
        // Nothing of its answers is kept for clients: route decisions, computed answers, files and composed orders forgotten.
        handler.forget();
        site.current.cache.forget();
        site.current.context.index.forget?.();
      }
    },
    close: () =>
      listening
        .close(limits.closeGrace)
        .then((cut) => {
          if (cut)
            log(
              `closing: cut ${cut} ${cut === 1 ? 'connection' : 'connections'} still open ${limits.closeGrace / 1000} s after close began (answers their clients were not reading)`,
            );
        })
        .finally(() => requests?.flush()),
  };
}
