import type { Bytes } from '../core/bytes.js';
import { ROUTES } from '../core/route-table.js';

// An edge function's computed answers kept by the platform's cache (the Workers Cache API, `caches.default`), so a
// repeated query no file covers costs a cache read, as a file does. The key is the request's own
// path and query (what the answer follows from) under the data's tag, its number of cities and the
// JSON form: a new build is never answered from an old one's entries, and never a hash of the
// query (a crafted query could collide with another's and fill its entry). Only 200s of GET with an
// ETag are kept; the body is written as the client reads it, both copies pulled in step, so
// neither is held whole in the isolate (a client that never reads holds one chunk, not the page).

/** The part of a Cache (the Workers' `caches.default`) used: match and put by a GET request. */
export interface PlatformCache {
  match(request: Request): Promise<Response | undefined>;
  put(request: Request, response: Response): Promise<void>;
}

const { header } = ROUTES;
/** Shared caches only (clients get the answer's own headers): a key names one build, so an entry never goes stale. */
const KEPT = 's-maxage=31536000';

/** The entry's key: the request's origin, then the data's tag, count and JSON form, then its path and query (`target`). */
export function cacheKey(request: Request, target: string, tag: string, count: number, indent: number | null): Request {
  const form = indent === null ? 'json' : `json-indent-${indent}`;
  return new Request(`${new URL(request.url).origin}/${ROUTES.edge.dir}/answers/${tag}/${count}/${form}${target}`);
}

/** A cached entry as the client's answer: its stored headers but the cache's own (the platform's hit marker stays). */
export function fromCache(hit: Response, head: boolean): Response {
  const headers = new Headers(hit.headers);
  headers.delete(header.cacheControl);
  headers.delete('Age');
  if (head) void hit.body?.cancel();
  return new Response(head ? null : hit.body, { status: hit.status, headers });
}

/** `response` sent to the client while its body is also put in `cache` under `key` (`background` keeps the put going past the answer). */
export function keptWhileSent(
  response: Response,
  key: Request,
  cache: PlatformCache,
  background: (work: Promise<unknown>) => void,
): Response {
  if (!response.body) return response;
  const [client, stored] = inStep(response.body);
  putCopy(stored, response.status, response.headers, key, cache, background, () => {
    stored.cancel().catch(() => undefined);
  });
  return new Response(client, { status: response.status, headers: response.headers });
}

/**
 * `body`, a copy of an answer written in step with the client's, put in `cache` under `key`. A put
 * that ends without reading its body (it failed, or the cache keeps nothing there) lets it go
 * (`stop`): the client's copy never waits for it.
 */
export function putCopy(
  body: ReadableStream<Bytes>,
  status: number,
  answerHeaders: Headers | Record<string, string>,
  key: Request,
  cache: PlatformCache,
  background: (work: Promise<unknown>) => void,
  stop: () => void,
): void {
  const headers = new Headers(answerHeaders);
  headers.set(header.cacheControl, KEPT);
  const put = cache.put(key, new Response(body, { status, headers }));
  background(put.catch(() => undefined).finally(stop));
}

/**
 * Two streams of one source's chunks, read from it only once both have asked for the next (or
 * one was cancelled): at most one chunk is held per branch. ReadableStream.tee() would instead
 * hold for the slower branch all the faster one has read: a whole page, for a client that stops.
 */
type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Bytes>['read']>>;

export function inStep(source: ReadableStream<Bytes>): [ReadableStream<Bytes>, ReadableStream<Bytes>] {
  const reader = source.getReader();
  let live = 2;
  let asked = 0;
  let round = nextRound();
  function nextRound() {
    let settle!: (result: ReadResult | Error) => void;
    const result = new Promise<ReadResult | Error>((resolve) => (settle = resolve));
    return { result, settle };
  }
  const readIfAllAsked = () => {
    if (live === 0 || asked < live) return;
    const current = round;
    round = nextRound();
    asked = 0;
    reader.read().then(current.settle, (error: unknown) => current.settle(error as Error));
  };
  const branch = (): ReadableStream<Bytes> => {
    let done = false;
    /** The round it last asked for: still the current one, a cancel takes its ask back. */
    let askedIn: typeof round | undefined;
    return new ReadableStream<Bytes>(
      {
        async pull(controller) {
          askedIn = round;
          asked++;
          readIfAllAsked();
          const next = await askedIn.result;
          if (done) return;
          if (next instanceof Error) return controller.error(next);
          if (next.done) {
            done = true;
            return controller.close();
          }
          controller.enqueue(next.value);
        },
        cancel() {
          if (done) return;
          done = true;
          if (askedIn === round) asked--;
          live--;
          if (live === 0) return void reader.cancel();
          readIfAllAsked();
        },
      },
      { highWaterMark: 0 },
    );
  };
  return [branch(), branch()];
}
