import cluster, { type Worker } from 'node:cluster';
import { CitiesApiError } from '../core/errors.js';
import type { City } from '../core/fields.js';
import { CreateRefused } from '../post/city-store.js';
import type { ServerLimits } from '../http/limits.js';
import { readManifestHead } from '../store/manifest-file.js';
import type { LoggedCityWriter } from '../dataset/logged-writer.js';
import type { SiteSettings } from '../site/spec.js';
import type { RunningServer } from './front.js';
import { SiteBuilder, type Served, type SiteBuilderOptions } from './site-builder.js';
import { rebuildOnChange, watchDataset } from './dataset-watch.js';
import type { FromPrimary, FromWorker, WorkerSetup } from './cluster-messages.js';
import { openWritable } from './writable.js';

const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? '../../lib/app/serve-worker.js' : './serve-worker.js',
  import.meta.url,
);
/** How long a worker may take to close before it is killed. */
const CLOSE_MS = 5000;

type ClusterOptions = Omit<SiteBuilderOptions, 'serverUrl'> &
  Omit<WorkerSetup, 'writable' | 'limits' | 'requestLog'> & {
    readonly requestLog?: ((line: string) => void) | undefined;
    readonly data?: string | undefined;
    readonly writable?: boolean | undefined;
    readonly watch?: boolean | undefined;
    readonly limits: ServerLimits;
    readonly log: (line: string) => void;
  };

/**
 * `serve` with several worker processes (node:cluster) sharing the port: each answers every
 * request from the whole site; this process is the one writer. A rebuild (--watch, a POST) first
 * has every worker stop using the site's files, then builds, then has every worker load the new
 * site, and only then is reported (a POST answered 201): what one worker answers after that,
 * every worker answers. A worker that dies is replaced.
 */
export async function serveCluster(options: ClusterOptions, count: number): Promise<RunningServer> {
  const { log } = options;
  cluster.setupPrimary({ exec: WORKER_URL.pathname, args: [], serialization: 'advanced' });
  const setup: WorkerSetup = {
    dir: options.dir,
    port: options.port,
    host: options.host,
    token: options.token,
    limits: options.limits,
    failoverOrigin: options.failoverOrigin,
    previewPages: options.previewPages,
    requestLog: !!options.requestLog,
    writable: !!options.writable,
  };
  const workers = new Set<Worker>();
  let writer: LoggedCityWriter | undefined;
  let watching: Awaited<ReturnType<typeof watchDataset>> | undefined;
  let closing = false;
  let asked = 0;
  /** Sends `message` to every worker and resolves once each has answered it (a worker that exits meanwhile counts as answered). */
  const everyWorker = (
    message:
      | { type: 'open'; baseUrl?: string | undefined }
      | { type: 'replace' | 'replaced' }
      | { type: 'add'; cities: readonly City[] },
  ) => Promise.all([...workers].map((worker) => ask(worker, { ...message, id: ++asked })));
  let opened = false;
  /** A new worker, listening; once the site is open, it opens it too. */
  const start = async (): Promise<{ worker: Worker; url: string }> => {
    const worker = cluster.fork();
    workers.add(worker);
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'create') void create(worker, message.id, message.city);
      if (message.type === 'log') log(message.line);
      if (message.type === 'request') options.requestLog?.(message.line);
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (closing || !opened) return;
      log(`worker ${worker.process.pid} exited (${signal ?? code}): starting another`);
      start().catch((error) => log(`error: a worker could not start: ${(error as Error).message}`));
    });
    // Messages sent before the worker's module listens would be lost: it says when it does.
    const loaded = await new Promise<boolean>((resolve) => {
      worker.on('message', (message: FromWorker) => message.type === 'loaded' && resolve(true));
      worker.once('exit', () => resolve(false));
    });
    const listening = loaded ? await ask(worker, { type: 'setup', id: ++asked, setup }) : undefined;
    if (listening?.type !== 'listening')
      throw new CitiesApiError(`a server worker (pid ${worker.process.pid}) exited while starting`);
    if (opened) await ask(worker, { type: 'open', id: ++asked });
    if (opened && writer) await ask(worker, { type: 'add', id: ++asked, cities: writer.unbuilt() });
    return { worker, url: listening.url };
  };
  const create = async (worker: Worker, id: number, city: unknown) => {
    let reply: FromPrimary;
    try {
      reply = {
        type: 'created',
        id,
        city: await writer!.create(city as Parameters<LoggedCityWriter['create']>[0]),
      };
    } catch (error) {
      // The writer answers its failures as refusals; anything else is logged here in one line, a plain 500 there.
      if (!(error instanceof CreateRefused)) log(`POST failed (500): ${(error as Error).message}`);
      const refused = error instanceof CreateRefused ? error : new CreateRefused(500, 'A server error occurred.');
      reply = {
        type: 'refused',
        id,
        status: refused.status,
        detail: refused.detail,
        retryAfter: refused.retryAfter,
      };
    }
    if (worker.isConnected()) worker.send(reply);
  };
  try {
    const { url } = (await Promise.all(Array.from({ length: count }, start)))[0]!;
    const builder = new SiteBuilder({ ...options, serverUrl: url });
    const writable =
      options.writable && options.data
        ? await openWritable({
            data: options.data,
            dir: options.dir,
            builder,
            answer: async (cities) => void (await everyWorker({ type: 'add', cities })),
            lockWait: options.lockWait,
            log,
          })
        : undefined;
    writer = writable?.writer;
    if (options.data) await builder.first(options.data);
    const site = { current: { manifest: { settings: await settingsOf(options.dir) } } };
    const served: Served = {
      current: site.current,
      replace: async (build) => {
        await everyWorker({ type: 'replace' });
        try {
          await build();
        } finally {
          await everyWorker({ type: 'replaced' });
          site.current.manifest.settings = await settingsOf(options.dir);
        }
      },
    };
    builder.serving(writable ? writable.guard(served) : served);
    await writable?.started();
    const answers = await everyWorker({ type: 'open', baseUrl: options.data ? undefined : options.baseUrl });
    const first = answers.find((answer) => answer?.type === 'opened');
    if (first?.type !== 'opened' || answers.length < count)
      throw new CitiesApiError('server workers exited while opening the site');
    opened = true;
    const describe = () => `answered by ${workers.size} workers`;
    if (options.watch)
      watching = await watchDataset(
        options.data!,
        () =>
          void rebuildOnChange(options.data!, builder, describe, log, (ms) => watching?.again(ms), options.lockWait),
      );
    const { apiUrl, summary } = first;
    log(`serving ${options.dir} at ${apiUrl} with ${count} workers (${summary})`);
    return { url, apiUrl, close };
  } catch (error) {
    await close();
    throw error;
  }

  async function close(): Promise<void> {
    closing = true;
    watching?.close();
    await writer?.close();
    await Promise.all(
      [...workers].map(
        (worker) =>
          new Promise<void>((resolve) => {
            const kill = setTimeout(() => worker.kill('SIGKILL'), CLOSE_MS);
            worker.once('exit', () => (clearTimeout(kill), resolve()));
            if (worker.isConnected()) worker.send({ type: 'close' } satisfies FromPrimary);
            else worker.kill();
          }),
      ),
    );
  }
}

/** Sends a request to a worker; resolves with its answer (of the same id), or undefined if it exits first; rejects on its `failed`. */
function ask(worker: Worker, message: FromPrimary & { id: number }): Promise<FromWorker | undefined> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: FromWorker) => {
      if (!('id' in reply) || reply.id !== message.id || reply.type === 'create') return;
      done();
      if (reply.type === 'failed') reject(new CitiesApiError(reply.message, reply.exitCode === 2 ? 2 : 1));
      else resolve(reply);
    };
    const onExit = () => (done(), resolve(undefined));
    const done = () => {
      worker.off('message', onMessage);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    worker.send(message);
  });
}

async function settingsOf(dir: string): Promise<SiteSettings> {
  const head = await readManifestHead(dir);
  if (!head)
    throw new CitiesApiError(
      `${dir} holds no cities-api site: build it first (cities-api build --out ${dir}) or pass --data`,
      2,
    );
  return head.settings;
}
