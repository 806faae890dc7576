import { ROUTES } from '../core/route-table.js';
import { CitiesApiError } from '../core/errors.js';

// What a single client may cost the server: how long it may take to send a request, how large
// the request line and headers may be, how long it may leave an answer unread, and what all
// answers may hold in memory. Pure: serve.ts applies them to node:http and the send gate.

export interface ServerLimits {
  /** Time to receive the request line and all headers, from the request's first byte (ms). */
  readonly headersTimeout: number;
  /** Time to receive the whole request, body included (ms). */
  readonly requestTimeout: number;
  /** Longest pause between two parts of a POST body before it is answered 408 (ms). */
  readonly bodyTimeout: number;
  /** How long an idle keep-alive connection stays open (ms). */
  readonly keepAliveTimeout: number;
  /** Request line plus headers, in bytes; beyond it node:http answers 431. */
  readonly maxHeaderSize: number;
  /** How long a client may take no byte of an answer before its connection is closed (ms), as nginx's send_timeout. */
  readonly sendTimeout: number;
  /** Bytes answers may hold in memory at once, across connections; beyond it further answers wait (see send-gate.ts). */
  readonly maxBufferedBytes: number;
  /** Requests one connection may have waiting for their answers (pipelined); at it, the connection is read no further until fewer wait (see pipeline-cap.ts). */
  readonly maxPipelinedRequests: number;
  /** How long a request arriving while the site is first built waits for it before a 503 with Retry-After (ms): a build of a second or two is then never seen. */
  readonly firstBuildHold: number;
  /** Bytes of computed answers (compact JSON listings) kept per server process beside the route memo (see answer-cache.ts). */
  readonly answerCacheBytes: number;
  /** How long close() lets the answers being sent finish before it cuts the connections still open, read or not (ms). */
  readonly closeGrace: number;
}

/** Request targets (path and query) longer than this are answered 414, as nginx's default 8k buffer does. */
export const MAX_TARGET_BYTES = ROUTES.limits.targetBytes;

export const DEFAULT_LIMITS: ServerLimits = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  bodyTimeout: 10_000,
  keepAliveTimeout: 5_000,
  // Well above MAX_TARGET_BYTES, so a long URL gets its 414 rather than node's 431.
  maxHeaderSize: 64 * 1024,
  sendTimeout: 60_000,
  maxBufferedBytes: 64 * 1024 * 1024,
  // No browser pipelines (Firefox, the last to offer it, removed it in version 54; curl in 7.65); clients that do
  // send a handful, benchmarks 16 (TechEmpower's plaintext test): twice that never pauses them.
  maxPipelinedRequests: 32,
  firstBuildHold: 2_000,
  answerCacheBytes: 16 * 1024 * 1024,
  closeGrace: 5_000,
};

/** The defaults with some replaced, checked: positive integers, headers within the request time. */
export function resolveLimits(given: Partial<ServerLimits> = {}): ServerLimits {
  const limits: ServerLimits = { ...DEFAULT_LIMITS };
  for (const [name, value] of Object.entries(given) as [keyof ServerLimits, number | undefined][]) {
    if (value === undefined) continue;
    if (!(name in DEFAULT_LIMITS)) throw new CitiesApiError(`unknown server limit "${name}"`, 2);
    if (!Number.isInteger(value) || value <= 0)
      throw new CitiesApiError(`server limit ${name} must be a positive integer, not ${value}`, 2);
    (limits as Record<keyof ServerLimits, number>)[name] = value;
  }
  if (limits.headersTimeout > limits.requestTimeout) {
    throw new CitiesApiError(
      `headersTimeout (${limits.headersTimeout} ms) must not exceed requestTimeout (${limits.requestTimeout} ms)`,
      2,
    );
  }
  // At 1, a POST waiting alone would hold its own connection's reading, and its body would never come.
  if (limits.maxPipelinedRequests < 2) {
    throw new CitiesApiError(
      `maxPipelinedRequests must be at least 2, not ${limits.maxPipelinedRequests}: at 1 a request's own body would go unread`,
      2,
    );
  }
  if (limits.maxHeaderSize <= MAX_TARGET_BYTES) {
    throw new CitiesApiError(`maxHeaderSize must exceed the ${MAX_TARGET_BYTES}-byte request target limit`, 2);
  }
  return limits;
}

/** How often node:http looks for expired requests: often enough that a timeout is late by a quarter at most. */
export function checkingInterval(limits: ServerLimits): number {
  return Math.max(25, Math.min(1000, Math.floor(Math.min(limits.headersTimeout, limits.requestTimeout) / 4)));
}
